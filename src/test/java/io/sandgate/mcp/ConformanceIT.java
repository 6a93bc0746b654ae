package io.sandgate.mcp;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.sandgate.mcp.ConformanceSuite.Outcome;
import io.sandgate.testing.AuthorizationServerDouble;
import io.sandgate.testing.Balancer;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.ReferenceMcpServer;
import io.sandgate.testing.RunningGateway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;


/**
 * The official MCP conformance suite, server scenarios, scores the gateway as it scores the server
 * behind it: {@code --requirements 2025-11-25} and {@code --requirements 2026-07-28} against
 * Sandgate's reference server ({@link ReferenceMcpServer}, TypeScript SDK 2.x) directly, then
 * through one gateway, and through one gateway with {@code mcp.auth} on, the
 * suite's client given a valid token (the CLI has no header option: {@code bearer.mjs}, preloaded,
 * adds {@code Authorization} to its requests). Scenario by scenario, the passed and failed counts
 * and the failing checks must be those of the direct run; what differs only in warnings is printed.
 *
 * <p>{@link ConformanceReplicasIT} runs it through two replicas, in another test JVM at the same
 * time. {@link ConformanceDnsRebindingIT} stays separate: it needs an upstream with no DNS-rebinding
 * protection of its own (the reference server has one), so that only the gateway can pass it.
 */
class ConformanceIT
{
    static final String SERVER_NAME = "conf";
    private static final String CLIENT_PATH = "/mcp/" + SERVER_NAME + "/mcp";
    private static final ReferenceMcpServer reference = ReferenceMcpServer.start();
    private static final ConformanceBaseline baseline = new ConformanceBaseline(reference, "one-gateway");
    private static AuthorizationServerDouble authorizationServer;
    /** In front of the gateway with auth: its URL is the gateway's resource URL, which the token is made for. */
    private static Balancer authFront;
    private static volatile RunningGateway withAuth;
    static void toReference(GatewayConfig config)
    {
        toReference(config, reference);
    }

    static void toReference(GatewayConfig config, ReferenceMcpServer server)
    {
        config.set("mcp.servers", List.of(Map.of("name", SERVER_NAME, "url", server.url(), "transport", "streamable")));
    }

    /** One gateway on its embedded defaults: in-memory store. */
    @RegisterExtension
    static final GatewayExtension single = new GatewayExtension(ConformanceIT::toReference);

    @RegisterExtension
    static final GatewayExtension authenticating = GatewayExtension.manual(ConformanceIT::toReference);

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

    @ParameterizedTest(name = "--requirements {0}")
    @ValueSource(strings = {"2025-11-25", "2026-07-28"})
    void oneGateway_scoresAsTheServerDirectly(String revision) throws Exception
    {
        Outcome through = ConformanceSuite.run("one gateway", single.uri(CLIENT_PATH).toString(), revision,
            baseline.results(revision + "-one-gateway"));
        baseline.assertScoresAsDirect(revision, through);
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
