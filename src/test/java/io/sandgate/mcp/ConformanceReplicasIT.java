package io.sandgate.mcp;

import io.sandgate.mcp.ConformanceSuite.Outcome;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.ReferenceMcpServer;
import io.sandgate.testing.RoundRobinReplicas;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The official MCP conformance suite scores two replicas sharing a real Redis, behind a front that
 * alternates every request between them, as it scores the reference server directly (see
 * {@link ConformanceIT}, which runs it through one gateway; the classes run side by side).
 */
class ConformanceReplicasIT
{
    private static final String CLIENT_PATH = "/mcp/" + ConformanceIT.SERVER_NAME + "/mcp";
    private static final ReferenceMcpServer reference = ReferenceMcpServer.start();
    private static final ConformanceBaseline baseline = new ConformanceBaseline(reference, "two-replicas");
    private static RoundRobinReplicas replicas;

    @RegisterExtension
    static final GatewayExtension twoReplicas = GatewayExtension.manual(config -> ConformanceIT.toReference(config, reference));

    @BeforeAll
    static void startReplicas() throws Exception
    {
        replicas = RoundRobinReplicas.start(twoReplicas);
    }

    @AfterAll
    static void stopAll() throws Exception
    {
        // The replicas before what they use; the extension would stop them only after this.
        Fixtures.closeInOrder(replicas, reference);
    }

    @ParameterizedTest(name = "--requirements {0}")
    @ValueSource(strings = {"2025-11-25", "2026-07-28"})
    void twoReplicasRoundRobin_scoresAsTheServerDirectly(String revision) throws Exception
    {
        replicas.clearRouted();
        Outcome through = ConformanceSuite.run("two replicas", replicas.baseUrl() + CLIENT_PATH, revision, baseline.results(revision + "-two-replicas"));
        assertTrue(replicas.bothServed(), replicas::routed);
        baseline.assertScoresAsDirect(revision, through);
    }
}
