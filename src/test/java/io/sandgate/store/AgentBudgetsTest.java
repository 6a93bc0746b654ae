package io.sandgate.store;

import java.time.Clock;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import io.sandgate.config.AgentPolicy.Budgets;
import io.sandgate.egress.AgentBudgets;
import io.sandgate.egress.AgentBudgets.Verdict;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The egress agents' budgets in memory and in a real Redis alike: the same calls get the same
 * answers from both, so that one replica and many hold an agent to one rule.
 */
class AgentBudgetsTest
{
    @AutoClose
    private static final RedissonOnRedis store = RedissonOnRedis.start();
    private static final AtomicInteger sequence = new AtomicInteger();

    static Stream<AgentBudgets> budgets()
    {
        return Stream.of(AgentBudgets.inMemory(Clock.systemUTC()), new RedisAgentBudgets(store.client));
    }

    /** An agent no other test uses: the Redis keys outlive a test. */
    private static String agent()
    {
        return "agent-" + sequence.incrementAndGet();
    }

    private static Verdict call(AgentBudgets budgets, String agent, Budgets limits, long requestBytes, long responseBytes) throws Exception
    {
        return budgets.take(agent, limits, true, requestBytes, responseBytes).get(5, TimeUnit.SECONDS);
    }

    @ParameterizedTest
    @MethodSource("budgets")
    void nCallsAMinuteGo_theNextWaitsForTheWindow_andARefusedCallUsesNothing(AgentBudgets budgets) throws Exception
    {
        String agent = agent();
        Budgets limits = new Budgets(3, 0, 0);
        for (int i = 0; i < 3; i++)
            assertTrue(call(budgets, agent, limits, 0, 0).goes(), "call " + (i + 1));
        for (int i = 0; i < 3; i++)
        {
            Verdict over = call(budgets, agent, limits, 0, 0);
            assertEquals(Budgets.REQUESTS_PER_MINUTE, over.budget());
            assertTrue(over.waitMillis() > 0 && over.waitMillis() <= 60_000, "until the minute's end: " + over.waitMillis());
        }
        assertTrue(call(budgets, agent(), limits, 0, 0).goes(), "another agent's budget is its own");
    }

    @ParameterizedTest
    @MethodSource("budgets")
    void bytesCountAfterTheFact_andRefuseTheNextCall_onceUsedUp(AgentBudgets budgets) throws Exception
    {
        String agent = agent();
        Budgets limits = new Budgets(0, 100, 1000);
        assertTrue(call(budgets, agent, limits, 0, 0).goes());
        assertTrue(call(budgets, agent, limits, 99, 999).goes(), "just under both");
        Verdict over = call(budgets, agent, limits, 1, 0);
        assertEquals(Budgets.REQUEST_BYTES_PER_HOUR, over.budget(), "the bytes reported with the call are counted before it is judged");
        assertTrue(over.waitMillis() > 60_000 && over.waitMillis() <= 3_600_000, "until the hour's end: " + over.waitMillis());

        String other = agent();
        assertTrue(budgets.take(other, limits, false, 0, 1500).get(5, TimeUnit.SECONDS).goes(), "a flush counts bytes, never refuses");
        assertEquals(Budgets.RESPONSE_BYTES_PER_HOUR, call(budgets, other, limits, 0, 0).budget());
    }

    @ParameterizedTest
    @MethodSource("budgets")
    void bytesOfAnAgentWithoutABytesBudget_areNotKept(AgentBudgets budgets) throws Exception
    {
        String agent = agent();
        Budgets callsOnly = new Budgets(2, 0, 0);
        assertTrue(call(budgets, agent, callsOnly, 1_000_000, 1_000_000).goes());
        assertTrue(call(budgets, agent, new Budgets(2, 10, 10), 0, 0).goes(), "nothing was counted under a budget that did not exist");
    }
}
