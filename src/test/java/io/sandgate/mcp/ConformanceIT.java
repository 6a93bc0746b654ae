package io.sandgate.mcp;

import java.util.List;
import java.util.Map;

import io.sandgate.mcp.ConformanceSuite.Outcome;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.ReferenceMcpServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The official MCP conformance suite, server scenarios, scores the gateway as it scores the server
 * behind it: {@code --requirements 2025-11-25} and {@code --requirements 2026-07-28} against
 * Sandgate's reference server ({@link ReferenceMcpServer}, TypeScript SDK 2.x) directly, then
 * through one gateway ({@link ConformanceAuthIT} runs it through one with {@code mcp.auth} on).
 * Scenario by scenario, the passed and failed counts and the failing checks must be those of the
 * direct run; what differs only in warnings is printed.
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

    @AfterAll
    static void stopAll() throws Exception
    {
        // The gateway before what it uses; the extension would stop it only after this.
        Fixtures.closeInOrder(reference);
    }

    @ParameterizedTest(name = "--requirements {0}")
    @ValueSource(strings = {"2025-11-25", "2026-07-28"})
    void oneGateway_scoresAsTheServerDirectly(String revision) throws Exception
    {
        Outcome through = ConformanceSuite.run("one gateway", single.uri(CLIENT_PATH).toString(), revision,
            baseline.results(revision + "-one-gateway"));
        baseline.assertScoresAsDirect(revision, through);
    }
}
