package io.sandgate.mcp;

import java.util.concurrent.Executor;
import java.util.function.Consumer;

import org.eclipse.jetty.io.Content;

/**
 * Reads an upstream's event stream as its bytes arrive and hands each event on, holding no thread
 * while the stream is quiet. A session's upstream GET stream is open for as long as its client
 * listens, mostly idle: read by a thread blocked on it, each session cost a replica a thread and its
 * stack (1.3 threads and 442 KB of RSS per session, see docs/BENCHMARKS.md).
 *
 * <p>Reading resumes on {@code executor} when bytes arrive, not on the HTTP client's thread: a
 * relay may wait on the store. One read loop runs at a time, so events are handed on in order.</p>
 */
final class EventStreamPump
{
    private final Content.Source source;
    private final Executor executor;
    private final Consumer<SseReader.Event> events;
    private final Consumer<Throwable> ended;
    private final SseParser parser = new SseParser();

    /**
     * @param events takes each event, in order
     * @param ended told once when the stream ends: null at its end, else why it failed
     */
    EventStreamPump(Content.Source source, Executor executor, Consumer<SseReader.Event> events, Consumer<Throwable> ended)
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
                parser.feed(chunk.getByteBuffer(), events);
            }
            catch (RuntimeException x)
            {
                chunk.release();
                source.fail(x);
                ended.accept(x);
                return;
            }
            chunk.release();
            if (chunk.isLast())
            {
                ended.accept(null);
                return;
            }
        }
    }
}
