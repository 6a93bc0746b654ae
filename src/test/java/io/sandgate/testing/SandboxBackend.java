package io.sandgate.testing;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

/**
 * A real HTTP server that plays the part of one sandbox pod (its noVNC web server) in gateway
 * tests. Running real Jetty on a real socket, rather than a mock, means the gateway's proxying,
 * streaming, timeouts and connection handling are exercised exactly as in production.
 *
 * <p>Routes:
 * <ul>
 *   <li>{@code /sse} - one event, then holds the stream open until {@link #releaseSecondEvent()}
 *       (or 10 s), then a second event. Lets tests prove the gateway streams rather than buffers.</li>
 *   <li>{@code /slow?ms=N} - answers {@code slow} after N ms, for gateway timeout tests.</li>
 *   <li>{@code /held} - answers {@code held} when the test calls {@link #releaseHeld()} (or after
 *       10 s), so a test that needs requests in progress holds them exactly as long as it needs.</li>
 *   <li>{@code /echo} - describes the request it saw, so tests can check what the gateway
 *       forwarded (headers added/stripped, path rewriting, body).</li>
 *   <li>{@code /status/<code>} - answers with that status.</li>
 *   <li>{@code /big?bytes=N} - N bytes of {@code 0123456789...} with a Content-Length.</li>
 *   <li>anything else - {@code backend=<name> path=<path>}, so asset-storm tests can tell which
 *       sandbox served each asset; {@code /} also sets {@code backend_cookie=1}.</li>
 * </ul>
 * Every response carries {@code X-Backend: <name>}, and every request is recorded.
 */
public final class SandboxBackend implements RecordsRequests<SandboxBackend.Recorded>, AutoCloseable
{
    /** One request as the backend received it. */
    public record Recorded(String method, String pathAndQuery, Map<String, List<String>> headers, String body) implements RecordedHeaders
    {
    }

    /** Bounds the {@code /sse} hold so a test that forgets to release cannot hang the build. */
    private static final long SSE_HOLD_SECONDS = 10;

    private final String name;
    private final Server server;
    private final ServerConnector connector;
    private final List<Recorded> requests = new CopyOnWriteArrayList<>();
    private final CountDownLatch secondEvent = new CountDownLatch(1);
    private final Queue<Runnable> held = new ConcurrentLinkedQueue<>();

    private SandboxBackend(String name)
    {
        this.name = Objects.requireNonNull(name, "name");
        // A thread parked on the /sse latch is interrupted when the server stops, which also drops
        // the open stream the way a dying pod would.
        server = LoopbackServers.server("sandbox-" + name);
        connector = LoopbackServers.connector(server);
        server.setHandler(new SandboxHandler());
    }

    public static SandboxBackend start(String name)
    {
        SandboxBackend backend = new SandboxBackend(name);
        LoopbackServers.start(backend.server, backend::close, "sandbox backend " + name);
        return backend;
    }

    public String name()
    {
        return name;
    }

    public int port()
    {
        return connector.getLocalPort();
    }

    public String hostPort()
    {
        return "127.0.0.1:" + port();
    }

    @Override
    public List<Recorded> requestLog()
    {
        return requests;
    }

    /** Lets every {@code /sse} stream, current and future, send its second event and finish. */
    public void releaseSecondEvent()
    {
        secondEvent.countDown();
    }

    /** Answers every {@code /held} request in progress now. */
    public void releaseHeld()
    {
        for (Runnable answer; (answer = held.poll()) != null; )
            answer.run();
    }

    @Override
    public void close()
    {
        LoopbackServers.stop(server, "sandbox backend " + name);
    }

    /*
     * Handler.Abstract defaults to InvocationType.BLOCKING, so Jetty always calls handle() on a
     * pooled thread. That makes the blocking body read below legitimate; everything after it
     * stays callback-driven so slow clients never pin threads.
     */
    private final class SandboxHandler extends Handler.Abstract
    {
        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception
        {
            String body = Content.Source.asString(request, StandardCharsets.UTF_8);
            requests.add(new Recorded(request.getMethod(), request.getHttpURI().getPathQuery(),
                    CommonRoutes.copyHeaders(request), body));

            response.getHeaders().put("X-Backend", name);

            String path = Request.getPathInContext(request);
            if (path.equals("/sse"))
            {
                sse(response, callback);
            }
            else if (path.equals("/held"))
            {
                AtomicBoolean answered = new AtomicBoolean();
                Runnable answer = () ->
                {
                    if (answered.compareAndSet(false, true))
                        CommonRoutes.text(response, callback, "held");
                };
                held.add(answer);
                server.getScheduler().schedule(answer, SSE_HOLD_SECONDS, TimeUnit.SECONDS);
            }
            else if (path.equals("/echo"))
            {
                CommonRoutes.text(response, callback, CommonRoutes.echo(new StringBuilder()
                    .append("backend=").append(name).append('\n')
                    .append("method=").append(request.getMethod()).append('\n')
                    .append("path=").append(request.getHttpURI().getPathQuery()).append('\n'), request, body));
            }
            else if (!CommonRoutes.handle(path, request, response, callback, server.getScheduler()))
            {
                if (path.equals("/"))
                {
                    response.getHeaders().add(HttpHeader.SET_COOKIE, "backend_cookie=1; Path=/");
                }
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain");
                Content.Sink.write(response, true,
                        "backend=" + name + " path=" + request.getHttpURI().getPath(), callback);
            }
            return true;
        }

        private void sse(Response response, Callback callback)
        {
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
            response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
            // A non-last write goes straight to the socket in the core API, so the client can
            // read the first event while we are still holding the stream open.
            Content.Sink.write(response, false, "data: one\n\n", Callback.from(
                    // The write may complete on a selector thread, which must never block on the
                    // latch, so the wait always moves onto the pool.
                    () -> server.getThreadPool().execute(() -> finishSse(response, callback)),
                    callback::failed));
        }

        private void finishSse(Response response, Callback callback)
        {
            try
            {
                // On timeout we still send the second event: the contract is "at most 10 s".
                secondEvent.await(SSE_HOLD_SECONDS, TimeUnit.SECONDS);
            }
            catch (InterruptedException e)
            {
                // Interrupted only when close() stops the pool: abort like a killed pod would.
                Thread.currentThread().interrupt();
                callback.failed(e);
                return;
            }
            Content.Sink.write(response, true, "data: two\n\n", callback);
        }
    }
}
