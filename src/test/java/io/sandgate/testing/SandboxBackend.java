package io.sandgate.testing;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.IteratingCallback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

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
 *   <li>{@code /echo} - describes the request it saw, so tests can check what the gateway
 *       forwarded (headers added/stripped, path rewriting, body).</li>
 *   <li>{@code /status/<code>} - answers with that status.</li>
 *   <li>{@code /big?bytes=N} - N bytes of {@code 0123456789...} with a Content-Length.</li>
 *   <li>anything else - {@code backend=<name> path=<path>}, so asset-storm tests can tell which
 *       sandbox served each asset; {@code /} also sets {@code backend_cookie=1}.</li>
 * </ul>
 * Every response carries {@code X-Backend: <name>}, and every request is recorded.
 */
public final class SandboxBackend implements AutoCloseable
{
    /**
     * One request as the backend received it. Header names are lower-case and the map is
     * case-insensitive, because HTTP header names are and tests should not care how the gateway
     * spelled them.
     */
    public record Recorded(String method, String pathAndQuery, Map<String, List<String>> headers, String body)
    {
        /** First value of the header, or {@code null}; the common case in assertions. */
        public String header(String name)
        {
            List<String> values = headers.get(name);
            return values == null || values.isEmpty() ? null : values.get(0);
        }
    }

    /** Bounds the {@code /sse} hold so a test that forgets to release cannot hang the build. */
    private static final long SSE_HOLD_SECONDS = 10;

    // A multiple of 10 so every chunk starts on a '0' and the same pattern buffer can be reused.
    private static final int BIG_CHUNK = 16_000;
    private static final ByteBuffer BIG_PATTERN = bigPattern();

    private final String name;
    private final Server server;
    private final ServerConnector connector;
    private final List<Recorded> requests = new CopyOnWriteArrayList<>();
    private final CountDownLatch secondEvent = new CountDownLatch(1);

    private SandboxBackend(String name)
    {
        this.name = Objects.requireNonNull(name, "name");
        QueuedThreadPool pool = new QueuedThreadPool();
        pool.setName("sandbox-" + name);
        // A thread parked on the /sse latch would otherwise hold up close() for the default 5 s;
        // a short stop timeout makes Jetty interrupt it, which also drops the open stream the way
        // a dying pod would.
        pool.setStopTimeout(500);
        server = new Server(pool);
        connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new SandboxHandler());
    }

    public static SandboxBackend start(String name)
    {
        SandboxBackend backend = new SandboxBackend(name);
        try
        {
            backend.server.start();
        }
        catch (Exception e)
        {
            backend.close();
            throw new IllegalStateException("Could not start sandbox backend " + name, e);
        }
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

    public List<Recorded> requests()
    {
        return List.copyOf(requests);
    }

    public int requestCount()
    {
        return requests.size();
    }

    public void clearRequests()
    {
        requests.clear();
    }

    /** Lets every {@code /sse} stream, current and future, send its second event and finish. */
    public void releaseSecondEvent()
    {
        secondEvent.countDown();
    }

    @Override
    public void close()
    {
        try
        {
            server.stop();
        }
        catch (Exception e)
        {
            throw new IllegalStateException("Could not stop sandbox backend " + name, e);
        }
    }

    private static ByteBuffer bigPattern()
    {
        byte[] bytes = new byte[BIG_CHUNK];
        for (int i = 0; i < bytes.length; i++)
        {
            bytes[i] = (byte) ('0' + i % 10);
        }
        return ByteBuffer.wrap(bytes).asReadOnlyBuffer();
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
                    copyHeaders(request), body));

            response.getHeaders().put("X-Backend", name);

            String path = Request.getPathInContext(request);
            if (path.equals("/sse"))
            {
                sse(response, callback);
            }
            else if (path.equals("/slow"))
            {
                slow(request, response, callback);
            }
            else if (path.equals("/echo"))
            {
                echo(request, body, response, callback);
            }
            else if (path.startsWith("/status/"))
            {
                status(path.substring("/status/".length()), response, callback);
            }
            else if (path.equals("/big"))
            {
                big(request, response, callback);
            }
            else
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

        private void slow(Request request, Response response, Callback callback)
        {
            long millis;
            try
            {
                millis = Long.parseLong(Request.extractQueryParameters(request).getValue("ms"));
            }
            catch (NumberFormatException e)
            {
                badRequest(response, callback, "ms must be a number of milliseconds");
                return;
            }
            // The scheduler rather than a sleep, so a storm of slow requests costs no threads.
            server.getScheduler().schedule(() ->
            {
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
                Content.Sink.write(response, true, "slow", callback);
            }, millis, TimeUnit.MILLISECONDS);
        }

        private void echo(Request request, String body, Response response, Callback callback)
        {
            StringBuilder text = new StringBuilder()
                    .append("backend=").append(name).append('\n')
                    .append("method=").append(request.getMethod()).append('\n')
                    .append("path=").append(request.getHttpURI().getPathQuery()).append('\n');
            for (HttpField field : request.getHeaders())
            {
                text.append("h:").append(field.getLowerCaseName()).append('=').append(field.getValue()).append('\n');
            }
            text.append("body=").append(body);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
            Content.Sink.write(response, true, text.toString(), callback);
        }

        private void status(String code, Response response, Callback callback)
        {
            int status;
            try
            {
                status = Integer.parseInt(code);
            }
            catch (NumberFormatException e)
            {
                status = -1;
            }
            // Interim (1xx) codes cannot be a final response, so they are refused like garbage.
            if (status < 200 || status > 599)
            {
                badRequest(response, callback, "status must be a final HTTP status code");
                return;
            }
            response.setStatus(status);
            if (HttpStatus.hasNoBody(status))
            {
                // 204/304 must not carry a body; writing one would break the exchange.
                callback.succeeded();
                return;
            }
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
            Content.Sink.write(response, true, "status " + status, callback);
        }

        private void big(Request request, Response response, Callback callback)
        {
            long total;
            try
            {
                total = Long.parseLong(Request.extractQueryParameters(request).getValue("bytes"));
            }
            catch (NumberFormatException e)
            {
                total = -1;
            }
            if (total < 0)
            {
                badRequest(response, callback, "bytes must be a non-negative number");
                return;
            }
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/octet-stream");
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, total);
            new BigBodyWriter(response, total, callback).iterate();
        }

        private void badRequest(Response response, Callback callback, String message)
        {
            response.setStatus(HttpStatus.BAD_REQUEST_400);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
            Content.Sink.write(response, true, message, callback);
        }
    }

    private static Map<String, List<String>> copyHeaders(Request request)
    {
        Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        for (HttpField field : request.getHeaders())
        {
            headers.computeIfAbsent(field.getLowerCaseName(), k -> new ArrayList<>()).add(field.getValue());
        }
        headers.replaceAll((k, v) -> List.copyOf(v));
        return Collections.unmodifiableMap(headers);
    }

    /**
     * Streams the body in chunks, each write waiting for the previous one, so large bodies
     * neither sit in memory nor overrun a slow reader (which is what backpressure tests need).
     */
    private static final class BigBodyWriter extends IteratingCallback
    {
        private final Response response;
        private final Callback callback;
        private long remaining;

        BigBodyWriter(Response response, long total, Callback callback)
        {
            this.response = response;
            this.callback = callback;
            this.remaining = total;
        }

        @Override
        protected Action process()
        {
            if (remaining == 0)
            {
                // Covers bytes=0 too: the response still needs its terminating last write.
                if (!response.hasLastWrite())
                {
                    response.write(true, null, this);
                    return Action.SCHEDULED;
                }
                return Action.SUCCEEDED;
            }
            int length = (int) Math.min(BIG_CHUNK, remaining);
            remaining -= length;
            // A fresh slice per write: Jetty consumes the buffer's position, the bytes are shared.
            response.write(remaining == 0, BIG_PATTERN.slice(0, length), this);
            return Action.SCHEDULED;
        }

        @Override
        protected void onCompleteSuccess()
        {
            callback.succeeded();
        }

        @Override
        protected void onCompleteFailure(Throwable cause)
        {
            callback.failed(cause);
        }
    }
}
