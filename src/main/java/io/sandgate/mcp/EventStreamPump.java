package io.sandgate.mcp;

import java.util.ArrayDeque;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.function.Consumer;
import java.util.function.Function;

import org.eclipse.jetty.io.Content;

/**
 * Reads an upstream's event stream as its bytes arrive and hands each event on, holding no thread
 * while the stream is quiet. A session's upstream GET stream is open for as long as its client
 * listens, mostly idle: read by a thread blocked on it, each session cost a replica a thread and its
 * stack (1.3 threads and 442 KB of RSS per session, see docs/BENCHMARKS.md).
 *
 * <p>Reading resumes on {@code executor} when bytes arrive, not on the HTTP client's thread: a
 * relay may call the store. One read loop runs at a time, so events are handed on in order; an
 * event whose handling is not done at once (a relay waiting out an unreachable store) holds up
 * the events after it and the reading, without holding a thread.</p>
 */
final class EventStreamPump
{
    /** What an event handler returns when it is done with the event at once. */
    static final CompletableFuture<Void> HANDED_ON = CompletableFuture.completedFuture(null);

    private final Content.Source source;
    private final Executor executor;
    private final Function<SseReader.Event, CompletableFuture<?>> events;
    private final Consumer<Throwable> ended;
    private final SseParser parser = new SseParser();
    /** Events parsed and not handed on yet: one chunk may hold several. Touched by the one read loop only. */
    private final Queue<SseReader.Event> parsed = new ArrayDeque<>(2);
    /** The stream's last chunk has been parsed: its end follows the events still {@link #parsed}. */
    private boolean last;

    /**
     * @param events takes each event, in order; the next is handed on once the future it returns
     *        completes ({@link #HANDED_ON} at once), and a failed one ends the stream
     * @param ended told once when the stream ends: null at its end, else why it failed
     */
    EventStreamPump(Content.Source source, Executor executor, Function<SseReader.Event, CompletableFuture<?>> events, Consumer<Throwable> ended)
    {
        this.source = source;
        this.executor = executor;
        this.events = events;
        this.ended = ended;
    }

    void start()
    {
        executor.execute(this::read);
    }

    private void read()
    {
        while (true)
        {
            if (!handOn())
                return;
            if (last)
            {
                ended.accept(null);
                return;
            }
            Content.Chunk chunk;
            try
            {
                chunk = source.read();
            }
            catch (RuntimeException x)
            {
                ended.accept(x);
                return;
            }
            if (chunk == null)
            {
                source.demand(() -> executor.execute(this::read));
                return;
            }
            if (Content.Chunk.isFailure(chunk))
            {
                // A transient failure (an idle timeout) leaves the exchange open: failing the source
                // ends it, so that its connection does not stay taken by a stream no one reads.
                source.fail(chunk.getFailure());
                ended.accept(chunk.getFailure());
                return;
            }
            try
            {
                parser.feed(chunk.getByteBuffer(), parsed::add);
            }
            catch (RuntimeException x)
            {
                chunk.release();
                fail(x);
                return;
            }
            last = chunk.isLast();
            chunk.release();
        }
    }

    /**
     * Hands on the events parsed so far, in order.
     *
     * @return false when one is still being handled (the read loop goes on once it is done) or failed
     */
    private boolean handOn()
    {
        SseReader.Event event;
        while ((event = parsed.poll()) != null)
        {
            CompletableFuture<?> handled;
            try
            {
                handled = events.apply(event);
            }
            catch (RuntimeException x)
            {
                fail(x);
                return false;
            }
            if (!handled.isDone())
            {
                handled.whenComplete((ignored, failure) -> executor.execute(failure == null ? this::read : () -> fail(cause(failure))));
                return false;
            }
            if (handled.isCompletedExceptionally())
            {
                fail(cause(handled.handle((ignored, failure) -> failure).join()));
                return false;
            }
        }
        return true;
    }

    private void fail(Throwable failure)
    {
        source.fail(failure);
        ended.accept(failure);
    }

    private static Throwable cause(Throwable failure)
    {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }
}
