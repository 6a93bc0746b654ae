package io.sandgate.mcp;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.McpConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.web.ClientCounts;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;

/**
 * The client streams this replica holds: at most {@code mcp.max-streams-per-client} for one client
 * (by the address the gateway trusts), each kept alive by SSE comments. A request takes its place
 * ({@link #reserve}) before anything of it is relayed, so that one over the cap is refused with
 * 429 before the server hears of it, on every path: a GET stream, an HTTP+SSE stream, and a call
 * bridged to an HTTP+SSE server, whose answer is a stream for as long as the call runs.
 */
final class ClientStreams
{
    private final Set<ClientStream> open = ConcurrentHashMap.newKeySet();
    private final ClientCounts perClient;
    private final Schedulers schedulers;
    private final Duration keepalive;
    private final Counter refused;

    ClientStreams(McpConfig config, MeterRegistry registry, Schedulers schedulers)
    {
        this.perClient = new ClientCounts(config.maxStreamsPerClient());
        this.schedulers = schedulers;
        this.keepalive = config.keepalive();
        registry.gaugeCollectionSize("sandgate.mcp.streams", List.of(), open);
        this.refused = Counter.builder("sandgate.mcp.streams.refused").description("Client streams refused: their client held too many").register(registry);
    }

    /**
     * Takes one of a client's places for the stream its request is about to open. Taken, not just
     * counted, so that concurrent requests of one client cannot all pass.
     *
     * @param client what the client's streams are counted by (its address's limit key)
     * @param opened run once when the stream has started
     * @throws GatewayException 429 when the client holds {@code mcp.max-streams-per-client} already
     */
    Place reserve(String client, Runnable opened)
    {
        if (!perClient.tryAcquire(client))
        {
            refused.increment();
            throw new GatewayException(HttpStatus.TOO_MANY_REQUESTS_429, "too_many_streams",
                "too many open MCP streams from this client (at most " + perClient.limit() + ", mcp.max-streams-per-client)");
        }
        return new Place(client, opened);
    }

    /** Streams open, ending ones included. */
    int size()
    {
        return open.size();
    }

    /**
     * One action per stream that runs and is not ending, each ending it as {@link #closeAll} would
     * and true when that call began the end; a drain spreads them over time. Streams already ending are left out, so a later call lists
     * only the streams opened since.
     */
    List<BooleanSupplier> endings()
    {
        List<BooleanSupplier> endings = new ArrayList<>();
        for (ClientStream stream : open)
        {
            if (stream.running())
                endings.add(stream::end);
        }
        return endings;
    }

    /** Closes every client stream; their sessions live on in the store. */
    void closeAll()
    {
        open.forEach(ClientStream::close);
    }

    private enum State
    {
        RESERVED, OPEN, RELEASED
    }

    /**
     * One client's place for one stream: held by the stream once it has started, until it closes,
     * or given back unused by {@link #cancel} when the request ends without one.
     */
    final class Place
    {
        private final String client;
        private final Runnable opened;
        private final AtomicReference<State> state = new AtomicReference<>(State.RESERVED);

        private Place(String client, Runnable opened)
        {
            this.client = client;
            this.opened = opened;
        }

        /**
         * The stream the place was taken for has started: from here on it counts against its
         * client's streams, no longer against its requests in progress, and gets keepalives.
         */
        void open(ClientStream stream)
        {
            if (!state.compareAndSet(State.RESERVED, State.OPEN))
            {
                stream.close();
                return;
            }
            opened.run();
            open.add(stream);
            // Each stream has a schedule of its own, the first run at a random point of the interval,
            // so that streams opened together do not all wake at once and need a worker each.
            Duration first = Duration.ofNanos(1 + ThreadLocalRandom.current().nextLong(keepalive.toNanos()));
            ScheduledFuture<?> keepalives = schedulers.every(first, keepalive, "MCP keepalive", stream::keepalive);
            stream.onClose(() ->
            {
                keepalives.cancel(false);
                open.remove(stream);
                if (state.compareAndSet(State.OPEN, State.RELEASED))
                    perClient.release(client);
            });
        }

        /** Gives the place back if no stream has taken it; does nothing once one has. */
        void cancel()
        {
            if (state.compareAndSet(State.RESERVED, State.RELEASED))
                perClient.release(client);
        }
    }
}
