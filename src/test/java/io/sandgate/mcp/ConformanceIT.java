package io.sandgate.mcp;

import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.sandgate.mcp.ConformanceSuite.Outcome;
import io.sandgate.testing.AuthorizationServerDouble;
import io.sandgate.testing.Balancer;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.ReferenceMcpServer;
import io.sandgate.testing.RoundRobinReplicas;
import io.sandgate.testing.RunningGateway;
import org.eclipse.jetty.toolchain.test.MavenPaths;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The official MCP conformance suite, server scenarios, scores the gateway as it scores the server
 * behind it: {@code --requirements 2025-11-25} and {@code --requirements 2026-07-28} against
 * Sandgate's reference server ({@link ReferenceMcpServer}, TypeScript SDK 2.x) directly, then
 * through one gateway, then through two replicas sharing a real Redis behind a front that
 * alternates every request between them, and through one gateway with {@code mcp.auth} on, the
 * suite's client given a valid token (the CLI has no header option: {@code bearer.mjs}, preloaded,
 * adds {@code Authorization} to its requests). Scenario by scenario, the passed and failed counts
 * and the failing checks must be those of the direct run; what differs only in warnings is printed.
 *
 * <p>{@link ConformanceDnsRebindingIT} stays separate: it needs an upstream with no DNS-rebinding
 * protection of its own (the reference server has one), so that only the gateway can pass it.
 */
class ConformanceIT
{
    private static final String SERVER_NAME = "conf";
    private static final String CLIENT_PATH = "/mcp/" + SERVER_NAME + "/mcp";
    private static final Path RESULTS = MavenPaths.targetTests().resolve("conformance");

    private static final ReferenceMcpServer reference = ReferenceMcpServer.start();
    private static RoundRobinReplicas replicas;
    private static AuthorizationServerDouble authorizationServer;
    /** In front of the gateway with auth: its URL is the gateway's resource URL, which the token is made for. */
    private static Balancer authFront;
    private static volatile RunningGateway withAuth;
    /** The direct runs, by revision: each is run once, by the first test that needs it. */
    private static final Map<String, Outcome> direct = new ConcurrentHashMap<>();

    private static void toReference(GatewayConfig config)
    {
        config.set("mcp.servers", List.of(Map.of("name", SERVER_NAME, "url", reference.url(), "transport", "streamable")));
    }

    /** One gateway on its embedded defaults: in-memory store. */
    @RegisterExtension
    static final GatewayExtension single = new GatewayExtension(ConformanceIT::toReference);

    @RegisterExtension
    static final GatewayExtension twoReplicas = GatewayExtension.manual(ConformanceIT::toReference);

    @RegisterExtension
    static final GatewayExtension authenticating = GatewayExtension.manual(ConformanceIT::toReference);

    @BeforeAll
    static void startGateways() throws Exception
    {
        replicas = RoundRobinReplicas.start(twoReplicas);
        authorizationServer = AuthorizationServerDouble.start();
        authFront = Balancer.start(request -> withAuth.uri());
        withAuth = authenticating.startAnother(config -> config.set("mcp.auth", Map.of("issuers", List.of(authorizationServer.issuer()),
            "jwks-url", authorizationServer.jwksUri(), "resource-url", authFront.baseUrl())));
    }

    @AfterAll
    static void stopAll() throws Exception
    {
        // The replicas before what they use; the extensions would stop them only after this.
        Fixtures.closeInOrder(replicas, authFront, withAuth, authorizationServer, reference);
    }

    @ParameterizedTest(name = "--requirements {0}")
    @ValueSource(strings = {"2025-11-25", "2026-07-28"})
    void oneGateway_scoresAsTheServerDirectly(String revision) throws Exception
    {
        Outcome through = ConformanceSuite.run("one gateway", single.uri(CLIENT_PATH).toString(), revision,
            RESULTS.resolve(revision + "-one-gateway"));
        assertScoresAsDirect(revision, through);
    }

    @ParameterizedTest(name = "--requirements {0}")
    @ValueSource(strings = {"2025-11-25", "2026-07-28"})
    void twoReplicasRoundRobin_scoresAsTheServerDirectly(String revision) throws Exception
    {
        replicas.clearRouted();
        Outcome through = ConformanceSuite.run("two replicas", replicas.baseUrl() + CLIENT_PATH, revision,
            RESULTS.resolve(revision + "-two-replicas"));
        assertTrue(replicas.bothServed(), replicas::routed);
        assertScoresAsDirect(revision, through);
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
        Outcome through = ConformanceSuite.run("one gateway, auth on", url, revision, RESULTS.resolve(revision + "-auth-on"), token);
        assertScoresAsDirect(revision, through);
    }

    private static void assertScoresAsDirect(String revision, Outcome through) throws Exception
    {
        Outcome baseline = directRun(revision);
        String others = ConformanceSuite.otherDifferences(baseline, through);
        System.out.printf("conformance %s: direct %d passed, %d failed (%d ms); %s %d passed, %d failed (%d ms)%n%s",
            revision, baseline.passed(), baseline.failed(), baseline.took().toMillis(),
            through.target(), through.passed(), through.failed(), through.took().toMillis(),
            others.isEmpty() ? "" : "differences not in the score:\n" + others + "\n");
        // Not scored yet, but a client that resumes a cut-short answer must get the rest through the gateway too.
        assertTrue(!others.contains("server-sse-polling"), () -> "SSE polling differs through the gateway:\n" + others);
        String differences = ConformanceSuite.scoredDifferences(baseline, through);
        assertEquals("", differences, () -> "--requirements " + revision + ": the scored scenarios differ through the gateway ("
            + through.target() + ") from the reference server directly:\n" + differences
            + "\n--- suite output through the gateway\n" + through.report());
    }

    private static synchronized Outcome directRun(String revision) throws Exception
    {
        Outcome baseline = direct.get(revision);
        if (baseline == null)
        {
            baseline = ConformanceSuite.run("direct", reference.url(), revision, RESULTS.resolve(revision + "-direct"));
            direct.put(revision, baseline);
        }
        return baseline;
    }
}
