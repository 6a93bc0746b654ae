package io.sandgate.mcp;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.sandgate.mcp.ConformanceSuite.Outcome;
import io.sandgate.testing.AuthorizationServerDouble;
import io.sandgate.testing.Balancer;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.ReferenceMcpServer;
import io.sandgate.testing.RunningGateway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;


/**
 * The official MCP conformance suite through one gateway with {@code mcp.auth} on scores as the
 * reference server does directly (see {@link ConformanceIT}): the suite's client is given a valid
 * token (the CLI has no header option: {@code bearer.mjs}, preloaded, adds {@code Authorization} to
 * its requests). Apart from {@link ConformanceIT} so that the two run in test JVMs of their own.
 */
class ConformanceAuthIT
{
    private static final String CLIENT_PATH = "/mcp/" + ConformanceIT.SERVER_NAME + "/mcp";
    private static final ReferenceMcpServer reference = ReferenceMcpServer.start();
    private static final ConformanceBaseline baseline = new ConformanceBaseline(reference, "auth-on");
    private static AuthorizationServerDouble authorizationServer;
    /** In front of the gateway with auth: its URL is the gateway's resource URL, which the token is made for. */
    private static Balancer authFront;
    private static volatile RunningGateway withAuth;

    @RegisterExtension
    static final GatewayExtension authenticating = GatewayExtension.manual(config -> ConformanceIT.toReference(config, reference));

    @BeforeAll
    static void startGateways() throws Exception
    {
        authorizationServer = AuthorizationServerDouble.start();
        authFront = Balancer.start(request -> withAuth.uri());
        withAuth = authenticating.startAnother(config -> config.set("mcp.auth", Map.of("issuers", List.of(authorizationServer.issuer()),
            "jwks-url", authorizationServer.jwksUri(), "resource-url", authFront.baseUrl())));
    }

    @AfterAll
    static void stopAll() throws Exception
    {
        // The gateway before what it uses; the extensions would stop it only after this.
        Fixtures.closeInOrder(authFront, withAuth, authorizationServer, reference);
    }

    /**
     * With auth on, a client holding a valid token for the endpoint meets the server as it is.
     * The same run without the token fails nearly every check (401): what makes this one pass is
     * the token the preload adds, not an endpoint left open.
     */
    @ParameterizedTest(name = "--requirements {0}")
    @ValueSource(strings = {"2025-11-25", "2026-07-28"})
    void oneGatewayWithAuth_aClientWithAValidToken_scoresAsTheServerDirectly(String revision) throws Exception
    {
        String url = authFront.baseUrl() + CLIENT_PATH;
        // Long enough for any run; made for the endpoint, as a client asking with resource=<url> gets it.
        String token = authorizationServer.token().subject("conformance").clientId("conformance-suite").audience(url)
            .expiresAt(Instant.now().plus(Duration.ofHours(1))).sign();
        Outcome through = ConformanceSuite.run("one gateway, auth on", url, revision, baseline.results(revision + "-auth-on"), token);
        baseline.assertScoresAsDirect(revision, through);
    }
}
