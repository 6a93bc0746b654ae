package io.sandgate.egress;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.sandgate.config.ConfigKeys;
import io.sandgate.config.ValueParser;
import io.sandgate.core.Schedulers;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Where the SSRF guard resolves target names, so that no request thread waits on a name server:
 * an agent may name a host whose name server never answers, and a few hundred such calls would
 * otherwise hold every request thread of every face for the resolver's whole timeout.
 *
 * <p>Each lookup runs on a thread of the egress face's own, under a deadline. The JDK's resolver
 * cannot be interrupted, so a lookup past its deadline keeps its thread until the resolver gives
 * up, and counts against the bound until then: beyond {@code maxInFlight} lookups a call is
 * refused at once rather than queued behind lookups that may never end.
 */
final class DnsLookups implements AutoCloseable
{
    private final ThreadPoolExecutor threads;
    /** One per lookup under way, taken before it is submitted and returned when the resolver returns. */
    private final Semaphore inFlight;
    private final Duration timeout;
    private final ScheduledExecutorService timer;

    /**
     * @param maxInFlight lookups under way at once, and so the most threads this holds
     * @param timeout how long a caller waits for a lookup
     * @param timer where the deadlines run
     */
    DnsLookups(int maxInFlight, Duration timeout, ScheduledExecutorService timer)
    {
        if (maxInFlight < 1)
            throw new IllegalArgumentException("maxInFlight: " + maxInFlight + " (expected: >= 1)");
        // No more threads than permits, so a lookup never waits in the queue; idle ones end.
        this.threads = new ThreadPoolExecutor(maxInFlight, maxInFlight, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), Schedulers.daemon("sandgate-dns"));
        threads.allowCoreThreadTimeOut(true);
        this.inFlight = new Semaphore(maxInFlight);
        this.timeout = timeout;
        this.timer = timer;
    }

    /**
     * Runs {@code lookup}, which resolves {@code host}, on a lookup thread.
     *
     * @return completes with what {@code lookup} returns or throws, or fails with a
     *         {@link GatewayException}: 504 when the deadline passes first, 503 when the bound is
     *         reached or the egress face is stopping
     */
    <T> CompletableFuture<T> run(String host, Supplier<T> lookup)
    {
        if (!inFlight.tryAcquire())
            return CompletableFuture.failedFuture(GatewayException.unavailable("too many target names are being resolved at once ("
                + ConfigKeys.EGRESS_DNS_MAX_IN_FLIGHT.name() + "); retry shortly"));
        CompletableFuture<T> answer = new CompletableFuture<>();
        try
        {
            ScheduledFuture<?> deadline = timer.schedule(() -> answer.completeExceptionally(timedOut(host)), timeout.toNanos(), TimeUnit.NANOSECONDS);
            answer.whenComplete((value, failure) -> deadline.cancel(false));
            threads.execute(() ->
            {
                try
                {
                    answer.complete(lookup.get());
                }
                catch (RuntimeException x)
                {
                    answer.completeExceptionally(x);
                }
                finally
                {
                    inFlight.release();
                }
            });
        }
        catch (RejectedExecutionException x)
        {
            inFlight.release();
            answer.completeExceptionally(GatewayException.unavailable("the egress face is stopping"));
        }
        return answer;
    }

    /** Names the host as the agent wrote it; nothing was resolved, so no address can be told. */
    private GatewayException timedOut(String host)
    {
        return new GatewayException(HttpStatus.GATEWAY_TIMEOUT_504, "dns_timeout", "target " + host + " did not resolve within "
            + ValueParser.durationText(timeout) + " (" + ConfigKeys.EGRESS_DNS_TIMEOUT.name() + ")");
    }

    /** Lookups still under way are interrupted; a resolver that ignores it ends on its own, on a daemon thread. */
    @Override
    public void close()
    {
        threads.shutdownNow();
    }
}
