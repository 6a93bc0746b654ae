package io.sandgate.testing;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.IteratingCallback;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * The routes {@link SandboxBackend} and {@link TargetServer} answer alike ({@code /status/<code>},
 * {@code /big?bytes=N}, {@code /slow?ms=N}), and what both record and echo of a request. Every
 * write is callback-driven, so a slow reader never pins a thread of the fixture.
 */
final class CommonRoutes
{
    // A multiple of 10 so every chunk starts on a '0' and the same pattern buffer can be reused.
    private static final int BIG_CHUNK = 16_000;
    private static final ByteBuffer BIG_PATTERN = bigPattern();

    private CommonRoutes()
    {
    }

    /**
     * Answers the route if it is one of the common ones.
     *
     * @return false if {@code path} is not a common route, and nothing was written
     */
    static boolean handle(String path, Request request, Response response, Callback callback, Scheduler scheduler)
    {
        if (path.startsWith("/status/"))
            status(path.substring("/status/".length()), response, callback);
        else if (path.equals("/big"))
            big(request, response, callback);
        else if (path.equals("/slow"))
            slow(request, response, callback, scheduler);
        else
            return false;
        return true;
    }

    /** The request's headers, one {@code h:<lower-case name>=<value>} line each, then {@code body=}. */
    static String echo(StringBuilder head, Request request, String body)
    {
        for (HttpField field : request.getHeaders())
            head.append("h:").append(field.getLowerCaseName()).append('=').append(field.getValue()).append('\n');
        return head.append("body=").append(body).toString();
    }

    static void text(Response response, Callback callback, String text)
    {
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
        Content.Sink.write(response, true, text, callback);
    }

    static void badRequest(Response response, Callback callback, String message)
    {
        response.setStatus(HttpStatus.BAD_REQUEST_400);
        text(response, callback, message);
    }

    /**
     * Header names lower-case in a case-insensitive map, because HTTP header names are and tests
     * should not care how the gateway spelled them.
     */
    static Map<String, List<String>> copyHeaders(Request request)
    {
        Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        for (HttpField field : request.getHeaders())
            headers.computeIfAbsent(field.getLowerCaseName(), k -> new ArrayList<>()).add(field.getValue());
        headers.replaceAll((k, v) -> List.copyOf(v));
        return Collections.unmodifiableMap(headers);
    }

    /** The parameter as a number; {@code fallback} if absent, -1 if not a number. */
    static long parameter(Request request, String name, long fallback)
    {
        String value = Request.extractQueryParameters(request).getValue(name);
        if (value == null)
            return fallback;
        try
        {
            return Long.parseLong(value);
        }
        catch (NumberFormatException e)
        {
            return -1;
        }
    }

    private static void status(String code, Response response, Callback callback)
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
        // 204/304 must not carry a body; writing one would break the exchange.
        if (HttpStatus.hasNoBody(status))
            callback.succeeded();
        else
            text(response, callback, "status " + status);
    }

    private static void big(Request request, Response response, Callback callback)
    {
        long total = parameter(request, "bytes", -1);
        if (total < 0)
        {
            badRequest(response, callback, "bytes must be a non-negative number");
            return;
        }
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/octet-stream");
        response.getHeaders().put(HttpHeader.CONTENT_LENGTH, total);
        new BigBodyWriter(response, total, callback).iterate();
    }

    private static void slow(Request request, Response response, Callback callback, Scheduler scheduler)
    {
        long millis = parameter(request, "ms", -1);
        if (millis < 0)
        {
            badRequest(response, callback, "ms must be a non-negative number of milliseconds");
            return;
        }
        // The scheduler rather than a sleep, so a storm of slow requests costs no threads.
        scheduler.schedule(() -> text(response, callback, "slow"), millis, TimeUnit.MILLISECONDS);
    }

    private static ByteBuffer bigPattern()
    {
        byte[] bytes = new byte[BIG_CHUNK];
        for (int i = 0; i < bytes.length; i++)
            bytes[i] = (byte)('0' + i % 10);
        return ByteBuffer.wrap(bytes).asReadOnlyBuffer();
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
            int length = (int)Math.min(BIG_CHUNK, remaining);
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
