package io.sandgate.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;
import java.util.function.LongFunction;
import java.util.function.Predicate;

import org.eclipse.jetty.client.BufferingResponseListener;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * Open-loop HTTP load at a fixed rate, the way wrk2 does it: request {@code i} is due at
 * {@code start + i / rate} whether or not earlier ones have answered, and its latency is counted
 * from that due time, not from when it was actually sent. A proxy that stalls therefore shows its
 * stall in the percentiles instead of quietly lowering the offered rate (coordinated omission).
 *
 * <p>Run: {@code java -cp ... io.sandgate.bench.OpenLoopLoad URL RATE SECONDS WARMUP_SECONDS CONNECTIONS [COOKIE]}.
 * The warm-up runs at the same rate and is not recorded (it also warms this JVM's own JIT).
 * Prints one {@code RESULT} line.</p>
 */
public final class OpenLoopLoad
{
    /** Accepts any body of a 200 answer, without buffering it. */
    static final Predicate<String> ANY_BODY = body -> true;

    /**
     * What a run measured: latencies of the recorded successful requests, sorted, and the requests
     * that failed, were not 200, were refused by the body check or never answered (warm-up
     * included), the first of which {@code firstError} describes (null if none failed).
     */
    record Outcome(long[] sorted, long errors, String firstError)
    {
    }

    private OpenLoopLoad()
    {
    }

    public static void main(String[] args)
    {
        int status = 0;
        try
        {
            run(args);
        }
        catch (Exception x)
        {
            x.printStackTrace();
            status = 1;
        }
        // Jetty's threads are not daemons: without an explicit exit a failed run would hang.
        System.exit(status);
    }

    private static void run(String[] args) throws Exception
    {
        String url = args[0];
        double rate = Double.parseDouble(args[1]);
        int seconds = Integer.parseInt(args[2]);
        int warmup = Integer.parseInt(args[3]);
        int connections = Integer.parseInt(args[4]);
        String cookie = args.length > 5 && !args[5].isEmpty() ? args[5] : null;

        HttpClient client = client(connections);
        Outcome outcome = measure(client, rate, seconds, warmup, i ->
        {
            Request request = client.newRequest(url);
            if (cookie != null)
                request.headers(headers -> headers.put(HttpHeader.COOKIE, cookie));
            return request;
        }, ANY_BODY);
        System.out.printf(java.util.Locale.ROOT, "RESULT rate=%.0f requests=%d errors=%d %s%n",
            rate, outcome.sorted().length, outcome.errors(), Samples.percentiles(outcome.sorted()));
        if (outcome.firstError() != null)
            System.err.println("first error: " + outcome.firstError());
        client.stop();
    }

    /** A started client with keep-alive connections, at most {@code connections} to each host and port. */
    static HttpClient client(int connections) throws Exception
    {
        QueuedThreadPool threads = new QueuedThreadPool(64);
        threads.setName("load");
        HttpClient client = new HttpClient();
        client.setExecutor(threads);
        client.setMaxConnectionsPerDestination(connections);
        client.setMaxRequestsQueuedPerDestination(Integer.MAX_VALUE);
        client.setFollowRedirects(false);
        client.start();
        return client;
    }

    /**
     * Sends {@code newRequest.apply(i)} for request {@code i} at its due time, for {@code warmup}
     * unrecorded seconds and then {@code seconds} recorded ones, and waits (at most 30 s) for the
     * answers. An answer is a success when it is a 200 and {@code acceptBody} accepts its body;
     * with {@link #ANY_BODY} the body is not read at all.
     */
    static Outcome measure(HttpClient client, double rate, int seconds, int warmup, LongFunction<Request> newRequest,
        Predicate<String> acceptBody) throws InterruptedException
    {
        return measureInterleaved(client, rate, seconds, warmup, 1, newRequest, acceptBody).get(0);
    }

    /**
     * As {@link #measure}, request {@code i} counted in group {@code i % groups}: targets compared
     * this way share every second of the run, and so the machine's noise, which runs one after
     * another do not. {@code rate} is the total over all groups.
     *
     * @return one outcome per group, in group order
     */
    static List<Outcome> measureInterleaved(HttpClient client, double rate, int seconds, int warmup, int groups, LongFunction<Request> newRequest,
        Predicate<String> acceptBody) throws InterruptedException
    {
        Samples[] samples = new Samples[groups];
        AtomicLong[] errors = new AtomicLong[groups];
        List<AtomicReference<String>> firstErrors = new ArrayList<>();
        for (int g = 0; g < groups; g++)
        {
            samples[g] = new Samples();
            errors[g] = new AtomicLong();
            firstErrors.add(new AtomicReference<>());
        }
        AtomicLong[] outstanding = new AtomicLong[groups];
        Arrays.setAll(outstanding, g -> new AtomicLong());
        long periodNanos = (long)(1e9 / rate);
        long warmupNanos = TimeUnit.SECONDS.toNanos(warmup);
        long total = (long)(rate * (seconds + warmup));
        long start = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(50);
        for (long i = 0; i < total; i++)
        {
            int group = (int)(i % groups);
            long due = start + i * periodNanos;
            long wait = due - System.nanoTime();
            if (wait > 0)
                LockSupport.parkNanos(wait);
            boolean recorded = due - start >= warmupNanos;
            Request request = newRequest.apply(i).timeout(30, TimeUnit.SECONDS);
            outstanding[group].incrementAndGet();
            // Null for a success, else what went wrong.
            Consumer<String> answered = error ->
            {
                long latency = System.nanoTime() - due;
                outstanding[group].decrementAndGet();
                if (error != null)
                {
                    errors[group].incrementAndGet();
                    firstErrors.get(group).compareAndSet(null, error);
                }
                else if (recorded)
                {
                    samples[group].add(latency);
                }
            };
            if (acceptBody == ANY_BODY)
            {
                request.send(result -> answered.accept(error(result)));
            }
            else
            {
                request.send(new BufferingResponseListener()
                {
                    @Override
                    public void onComplete(Result result)
                    {
                        String error = error(result);
                        answered.accept(error != null || acceptBody.test(getContentAsString()) ? error : "body refused by the check");
                    }
                });
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (Arrays.stream(outstanding).mapToLong(AtomicLong::get).sum() > 0 && System.nanoTime() < deadline)
            Thread.sleep(10);
        List<Outcome> outcomes = new ArrayList<>();
        for (int g = 0; g < groups; g++)
        {
            long left = outstanding[g].get();
            if (left > 0)
                firstErrors.get(g).compareAndSet(null, left + " requests never answered");
            outcomes.add(new Outcome(samples[g].sorted(), errors[g].get() + left, firstErrors.get(g).get()));
        }
        return outcomes;
    }

    /** Null for a 200, else its status or the failure. */
    private static String error(Result result)
    {
        if (result.isFailed())
            return result.getFailure().toString();
        int status = result.getResponse().getStatus();
        return status == HttpStatus.OK_200 ? null : "status " + status;
    }
}
