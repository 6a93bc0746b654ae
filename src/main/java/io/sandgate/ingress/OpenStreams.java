package io.sandgate.ingress;

import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The answers of unknown length in progress on this replica (an event stream, a chunked download,
 * an answer ended by closing), which a revocation ends as it ends a tunnel: otherwise a user whose
 * access was revoked, or whose sandbox moved to a new pod, would go on reading what the sandbox
 * streams for as long as it streams. An answer of declared length ends by itself and is not kept,
 * so that the common exchange pays nothing for this.
 */
public final class OpenStreams
{
    /** One answer: its sandbox, the route it went to, and how to cut it. Identity, not value, tells answers apart. */
    private static final class Stream
    {
        private final String sandboxId;
        private final Route route;
        private final Runnable cut;

        Stream(String sandboxId, Route route, Runnable cut)
        {
            this.sandboxId = sandboxId;
            this.route = route;
            this.cut = cut;
        }
    }

    private final Set<Stream> open = ConcurrentHashMap.newKeySet();

    /**
     * Keeps an answer that has begun until the returned action forgets it.
     *
     * @param cut ends the exchange, from any thread: the sandbox's connection and the browser's close
     */
    public Runnable add(String sandboxId, Route route, Runnable cut)
    {
        Stream stream = new Stream(sandboxId, route, cut);
        open.add(stream);
        return () -> open.remove(stream);
    }

    /** Cuts the sandbox's answers (an operator revoked access to it); returns how many. */
    public int cut(String sandboxId)
    {
        int cut = 0;
        for (Stream stream : open)
        {
            if (stream.sandboxId.equals(sandboxId) && open.remove(stream))
            {
                stream.cut.run();
                cut++;
            }
        }
        return cut;
    }

    /** Cuts the answers whose route no longer stands: revoked, or the sandbox on another pod, as the replica knows it now. */
    public void cutRevoked(Function<String, Optional<Route>> current)
    {
        for (Stream stream : open)
        {
            Optional<Route> now = current.apply(stream.sandboxId);
            if (now.isPresent() && !stream.route.sameAccess(now.get()) && open.remove(stream))
                stream.cut.run();
        }
    }

    int size()
    {
        return open.size();
    }
}
