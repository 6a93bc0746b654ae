package io.sandgate.store;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import io.sandgate.mcp.CallQuotas;
import io.sandgate.mcp.CallQuotas.Limit;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The MCP call quotas in memory and in a real Redis alike: the same calls get the same answers
 * from both, so that one replica and many enforce one rule.
 */
class CallQuotasTest
{
    private static final Duration MINUTE = Duration.ofMinutes(1);
    @AutoClose
    private static final RedissonOnRedis store = RedissonOnRedis.start();
    private static final AtomicInteger sequence = new AtomicInteger();

    static Stream<CallQuotas> quotas()
    {
        return Stream.of(CallQuotas.inMemory(Clock.systemUTC()), new RedisCallQuotas(store.client));
    }

    /** Keys no other test uses: the Redis keys outlive a test. */
    private static String caller()
    {
        return "{tools:caller-" + sequence.incrementAndGet() + "}";
    }

    private static long take(CallQuotas quotas, Limit... limits) throws Exception
    {
        return quotas.take(List.of(limits)).get(5, TimeUnit.SECONDS);
    }

    @ParameterizedTest
    @MethodSource("quotas")
    void nCallsGo_theNextWaitsForTheWindow(CallQuotas quotas) throws Exception
    {
        Limit limit = new Limit(caller(), 3, MINUTE);
        for (int i = 0; i < 3; i++)
            assertEquals(0, take(quotas, limit), "call " + (i + 1));
        long wait = take(quotas, limit);
        assertTrue(wait > 0 && wait <= MINUTE.toMillis(), "waits for the window to end: " + wait);
    }

    @ParameterizedTest
    @MethodSource("quotas")
    void aCallOverOneLimit_countsAgainstNone(CallQuotas quotas) throws Exception
    {
        String caller = caller();
        Limit server = new Limit(caller, 3, MINUTE);
        Limit echo = new Limit(caller + ":tool:echo", 1, MINUTE);
        assertEquals(0, take(quotas, server, echo));
        assertTrue(take(quotas, server, echo) > 0, "echo's own limit");
        assertTrue(take(quotas, server, echo) > 0, "still echo's");
        // The refused echo calls used none of the server's three.
        assertEquals(0, take(quotas, server));
        assertEquals(0, take(quotas, server));
        assertTrue(take(quotas, server) > 0);
    }

    @ParameterizedTest
    @MethodSource("quotas")
    void aBatch_countsEachCall_andIsRefusedWhole(CallQuotas quotas) throws Exception
    {
        Limit limit = new Limit(caller(), 3, MINUTE);
        assertEquals(0, take(quotas, limit, limit), "two calls of a batch");
        assertTrue(take(quotas, limit, limit) > 0, "two more would make four");
        assertEquals(0, take(quotas, limit), "the refused batch took nothing: one call is left");
        assertTrue(take(quotas, limit) > 0);
    }

    @ParameterizedTest
    @MethodSource("quotas")
    void whenTheWindowEnds_callsGoAgain(CallQuotas quotas) throws Exception
    {
        Limit limit = new Limit(caller(), 1, Duration.ofMillis(300));
        assertEquals(0, take(quotas, limit));
        assertTrue(take(quotas, limit) > 0);
        await().atMost(Duration.ofSeconds(5)).until(() -> take(quotas, limit) == 0);
    }
}
