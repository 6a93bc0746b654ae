package io.sandgate.mcp;

import java.util.List;
import java.util.Map;

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
 * {@link ConformanceIT}, which runs it through one gateway; the two classes run side by side); and
 * so it scores, through the same replicas, a federation whose one member is that server.
 */
class ConformanceReplicasIT
{
    private static final String CLIENT_PATH = "/mcp/" + ConformanceIT.SERVER_NAME + "/mcp";
    /** The reference server alone behind a federation that prefixes only what clashes: nothing does. */
    private static final String FEDERATION = "conf-fed";
    private static final ReferenceMcpServer reference = ReferenceMcpServer.start();
    private static final ConformanceBaseline baseline = new ConformanceBaseline(reference, "two-replicas");
    private static RoundRobinReplicas replicas;

    @RegisterExtension
    static final GatewayExtension twoReplicas = GatewayExtension.manual(config ->
    {
        ConformanceIT.toReference(config, reference);
        config.set("mcp.federations", List.of(Map.of("name", FEDERATION, "servers", List.of(ConformanceIT.SERVER_NAME), "prefix", "when-needed")));
    });

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

    @ParameterizedTest(name = "--requirements {0}")
    @ValueSource(strings = {"2025-11-25", "2026-07-28"})
    void aFederationOfOneMember_onTwoReplicasRoundRobin_scoresAsTheServerDirectly(String revision) throws Exception
    {
        replicas.clearRouted();
        Outcome through = ConformanceSuite.run("federation of one", replicas.baseUrl() + "/mcp/" + FEDERATION + "/mcp", revision,
            baseline.results(revision + "-federation"));
        assertTrue(replicas.bothServed(), replicas::routed);
        baseline.assertScoresAsDirect(revision, through);
    }
}
