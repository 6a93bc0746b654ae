package io.sandgate.egress;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.sandgate.core.Schedulers;
import io.sandgate.web.GatewayException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Lookups off the caller's thread: their answers, their deadline and their bound, without a server. */
class DnsLookupsTest
{
    private static final int BOUND = 2;

    private final CountDownLatch nameServerAnswers = new CountDownLatch(1);
    private final AtomicInteger hanging = new AtomicInteger();
    private Schedulers schedulers;
    private DnsLookups lookups;

    @BeforeEach
    void start()
    {
        schedulers = Schedulers.create();
        lookups = new DnsLookups(BOUND, Duration.ofMillis(200), schedulers.timer());
    }

    @AfterEach
    void stop()
    {
        nameServerAnswers.countDown();
        lookups.close();
        schedulers.close();
    }

    /** A lookup that answers only once the test lets the name server answer. */
    private String hang()
    {
        hanging.incrementAndGet();
        try
        {
            nameServerAnswers.await();
            return "late";
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
        finally
        {
            hanging.decrementAndGet();
        }
    }

    private static GatewayException failure(CompletableFuture<?> lookup)
    {
        CompletionException x = assertThrows(CompletionException.class, () -> lookup.orTimeout(5, TimeUnit.SECONDS).join());
        return assertInstanceOf(GatewayException.class, x.getCause());
    }

    @Test
    void lookup_runsOnALookupThread_andHandsBackItsAnswerOrItsRefusal() throws Exception
    {
        assertTrue(lookups.run("a.example", () -> Thread.currentThread().getName()).get(5, TimeUnit.SECONDS).startsWith("sandgate-dns-"));
        GatewayException refused = GatewayException.forbidden("target a.example resolves to a private address");
        assertSame(refused, failure(lookups.run("a.example", () ->
        {
            throw refused;
        })));
    }

    @Test
    void lookupPastItsDeadline_fails504_namingTheHostAndTheKey() throws Exception
    {
        CompletableFuture<String> lookup = lookups.run("slow.example", this::hang);
        GatewayException timedOut = failure(lookup);
        assertEquals(504, timedOut.status());
        assertEquals("dns_timeout", timedOut.code());
        assertEquals("target slow.example did not resolve within 200ms (egress.dns-timeout)", timedOut.getMessage());
    }

    @Test
    void lookupsBeyondTheBound_areRefused503AtOnce_untilTheHungOnesReturn_evenPastTheirDeadline() throws Exception
    {
        for (int i = 0; i < BOUND; i++)
            assertEquals(504, failure(lookups.run("slow" + i + ".example", this::hang)).status());
        assertEquals(BOUND, hanging.get(), "past their deadline, still resolving");

        CompletableFuture<String> refused = lookups.run("a.example", () -> "answer");
        assertTrue(refused.isDone(), "refused at once, not queued");
        GatewayException busy = failure(refused);
        assertEquals(503, busy.status());
        assertTrue(busy.getMessage().contains("egress.dns-max-in-flight"), busy.getMessage());

        nameServerAnswers.countDown();
        await().atMost(Duration.ofSeconds(5)).until(hanging::get, n -> n == 0);
        await("the slots are given back as the lookups return").atMost(Duration.ofSeconds(5)).ignoreExceptionsInstanceOf(ExecutionException.class)
            .until(() -> lookups.run("a.example", () -> "answer").get(5, TimeUnit.SECONDS), "answer"::equals);
    }

    @Test
    void closed_refusesWith503_andInterruptsLookupsUnderWay()
    {
        lookups.run("slow.example", this::hang);
        await().atMost(Duration.ofSeconds(5)).until(hanging::get, n -> n == 1);
        lookups.close();
        await("the lookup's thread is let go").atMost(Duration.ofSeconds(5)).until(hanging::get, n -> n == 0);
        GatewayException stopping = failure(lookups.run("a.example", () -> "answer"));
        assertEquals(503, stopping.status());
        assertFalse(stopping.getMessage().contains("dns-max-in-flight"), "not the bound: " + stopping.getMessage());
    }
}
