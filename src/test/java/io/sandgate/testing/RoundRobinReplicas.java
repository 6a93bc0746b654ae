package io.sandgate.testing;

import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Two gateway replicas sharing a real Redis, behind a front that sends each request to the other
 * replica than the last: a client's every next request lands on a replica that did not see the
 * one before, which is what shows that no state stays behind in one.
 */
public final class RoundRobinReplicas implements AutoCloseable
{
    private final RedisServerProcess redis;
    private final RunningGateway a;
    private final RunningGateway b;
    private final Balancer front;

    private RoundRobinReplicas(RedisServerProcess redis, RunningGateway a, RunningGateway b, Balancer front)
    {
        this.redis = redis;
        this.a = a;
        this.b = b;
        this.front = front;
    }

    /** Starts Redis, then two replicas with the extension's configuration and the Redis store, then the front. */
    public static RoundRobinReplicas start(GatewayExtension gateways) throws Exception
    {
        RedisServerProcess redis = RedisServerProcess.start();
        RunningGateway a = null;
        RunningGateway b = null;
        try
        {
            a = gateways.startAnother(config -> config.redisStore(redis));
            b = gateways.startAnother(config -> config.redisStore(redis));
            RunningGateway first = a;
            RunningGateway second = b;
            AtomicInteger next = new AtomicInteger();
            Balancer front = Balancer.start(request -> next.getAndIncrement() % 2 == 0 ? first.uri() : second.uri());
            return new RoundRobinReplicas(redis, a, b, front);
        }
        catch (Exception | Error x)
        {
            new RoundRobinReplicas(redis, a, b, null).close();
            throw x;
        }
    }

    /** The front's base URL, to which clients send everything. */
    public String baseUrl()
    {
        return front.baseUrl();
    }

    /** Forgets which replica took which request so far. */
    public void clearRouted()
    {
        front.routed.clear();
    }

    /** Whether both replicas took requests since {@link #clearRouted}, or the run proved nothing about sharing state. */
    public boolean bothServed()
    {
        List<String> routed = List.copyOf(front.routed);
        return routed.stream().anyMatch(r -> r.endsWith("-> " + a.port())) && routed.stream().anyMatch(r -> r.endsWith("-> " + b.port()));
    }

    /** The requests routed since {@link #clearRouted}, each as {@code METHOD path -> port}. */
    public List<String> routedList()
    {
        return List.copyOf(front.routed);
    }

    /** The requests routed, for a failure message. */
    public String routed()
    {
        return front.routed.toString();
    }

    /** The front, then the replicas, then Redis. */
    @Override
    public void close() throws Exception
    {
        Fixtures.closeInOrder(front, a, b, redis);
    }
}
