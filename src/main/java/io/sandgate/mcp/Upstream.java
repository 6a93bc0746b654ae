package io.sandgate.mcp;

import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import io.sandgate.config.McpConfig;
import io.sandgate.mcp.identity.UpstreamCredentials;
import io.sandgate.web.FlushingWriter;
import io.sandgate.web.GatewayException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletOutputStream;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;

/**
 * Requests to upstream MCP servers. No thread waits for an answer: {@link #exchange} completes when
 * the status and headers arrive, and the body (JSON, or an event stream that may last) is read as
 * it comes, relayed to a client with non-blocking writes, read event by event into the session's
 * log ({@link EventStreamPump}), or gathered into a string.
 */
final class Upstream
{
    /** How long an upstream may take to start answering (the headers) before the call is a 504. */
    private static final Duration HEADERS_TIMEOUT = Duration.ofSeconds(30);
    /**
     * How long a request/response exchange may stay silent once started. Event-stream answers to
     * a tool call may be quiet while the tool works, hence minutes rather than seconds; held GET
     * streams are not exchanges and have none (they end with their client stream).
     */
    static final Duration EXCHANGE_IDLE_TIMEOUT = Duration.ofMinutes(5);

    private final HttpClient client;
    private final ScheduledExecutorService timer;
    private final UpstreamCredentials credentials;

    /** @param credentials what each request carries in place of the client's token */
    Upstream(HttpClient client, ScheduledExecutorService timer, UpstreamCredentials credentials)
    {
        this.client = client;
        this.timer = timer;
        this.credentials = credentials;
    }

    /**
     * An answer whose headers have arrived and whose body is still arriving: an upstream's, or one
     * the gateway makes of a session's log ({@link SseMembers}).
     *
     * @param abort ends the answer early: the upstream's exchange is aborted, or the log no longer read
     */
    record Exchange(int status, HttpFields headers, Content.Source content, Consumer<Throwable> abort)
    {
        static Exchange of(Response response, Content.Source content)
        {
            return new Exchange(response.getStatus(), response.getHeaders(), content, response::abort);
        }

        String header(String name)
        {
            return headers.get(name);
        }

        boolean isEventStream()
        {
            String type = header(HttpHeader.CONTENT_TYPE.asString());
            return type != null && type.toLowerCase(Locale.ROOT).startsWith("text/event-stream");
        }

        /** Ends the answer early. */
        void abort(Throwable failure)
        {
            abort.accept(failure);
        }

        /** The whole body, read without blocking. */
        CompletableFuture<String> text()
        {
            return Content.Source.asStringAsync(content, StandardCharsets.UTF_8);
        }

        /** The whole body, read without blocking, at most {@code maxBytes} ({@link BoundedText}). */
        CompletableFuture<String> text(int maxBytes)
        {
            return BoundedText.read(this, maxBytes);
        }

        /** Reads and drops the body, so the connection can be reused. */
        void discard()
        {
            Content.Source.consumeAll(content, Callback.NOOP);
        }

        /**
         * Streams the body to the client of {@code async} and completes it at the end: each chunk
         * is written and flushed before the next is demanded from the upstream. A failure once the
         * client has seen the headers can only cut the response short.
         */
        void relayTo(AsyncContext async) throws IOException
        {
            ServletOutputStream output = async.getResponse().getOutputStream();
            FlushingWriter writer = new FlushingWriter(output, failure ->
            {
                content.fail(failure);
                abort(failure);
            });
            new Relay(content, writer, output, async).next();
        }
    }

    /** The read/demand loop of {@link Exchange#relayTo}. */
    private static final class Relay implements Callback
    {
        private final Content.Source content;
        private final FlushingWriter writer;
        private final ServletOutputStream output;
        private final AsyncContext async;
        private boolean listening;
        private Content.Chunk chunk;

        Relay(Content.Source content, FlushingWriter writer, ServletOutputStream output, AsyncContext async)
        {
            this.content = content;
            this.writer = writer;
            this.output = output;
            this.async = async;
        }

        void next()
        {
            while (true)
            {
                Content.Chunk read = content.read();
                if (read == null)
                {
                    content.demand(this::next);
                    return;
                }
                if (Content.Chunk.isFailure(read))
                {
                    // Nothing better to say to a client whose answer has started.
                    async.complete();
                    return;
                }
                if (!read.hasRemaining())
                {
                    read.release();
                    if (read.isLast())
                    {
                        async.complete();
                        return;
                    }
                    continue;
                }
                chunk = read;
                byte[] bytes = BufferUtil.toArray(read.getByteBuffer());
                writer.data(bytes, 0, bytes.length, this);
                try
                {
                    if (listening)
                    {
                        writer.onWritePossible();
                    }
                    else
                    {
                        listening = true;
                        output.setWriteListener(writer);
                    }
                }
                catch (IOException | RuntimeException x)
                {
                    writer.onError(x);
                }
                return;
            }
        }

        @Override
        public void succeeded()
        {
            Content.Chunk written = chunk;
            chunk = null;
            written.release();
            if (written.isLast())
                async.complete();
            else
                next();
        }

        @Override
        public void failed(Throwable failure)
        {
            Content.Chunk written = chunk;
            chunk = null;
            if (written != null)
                written.release();
            async.complete();
        }
    }

    /**
     * Sends a request/response exchange; the future completes with the answer's headers, or fails
     * with the gateway's 502 or 504. The body is the caller's to read, relay or discard.
     */
    CompletableFuture<Exchange> exchange(On on, HttpMethod method, URI uri, Map<String, String> headers, String body)
    {
        return send(newRequest(on, method, uri, headers, body).idleTimeout(EXCHANGE_IDLE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS));
    }

    /** Opens a long-lived GET stream; the future completes when its headers arrive. It has no idle timeout: it ends with its client. */
    CompletableFuture<Exchange> stream(On on, URI uri, Map<String, String> headers)
    {
        return send(newRequest(on, HttpMethod.GET, uri, headers, null).idleTimeout(0, TimeUnit.MILLISECONDS));
    }

    /**
     * Whose request goes to which server: what the server gets as credentials depends on both.
     *
     * @param owner as a session records it ({@link RequestChecks.Caller#owner})
     */
    record On(McpConfig.Server server, String owner)
    {
        static On session(McpConfig.Server server, McpSession session)
        {
            return new On(server, session.owner());
        }
    }

    private Request newRequest(On on, HttpMethod method, URI uri, Map<String, String> headers, String body)
    {
        Request request = client.newRequest(uri).method(method);
        request.headers(h ->
        {
            headers.forEach((name, value) ->
            {
                if (value != null)
                    h.put(name, value);
            });
            credentials.header(on.server(), on.owner(), uri).ifPresent(header -> h.put(header.name(), header.value().reveal()));
        });
        if (body != null)
            request.body(new StringRequestContent("application/json", body));
        return request;
    }

    private CompletableFuture<Exchange> send(Request request)
    {
        CompletableFuture<Exchange> answer = new CompletableFuture<>();
        ScheduledFuture<?> deadline = timer.schedule(() -> request.abort(new TimeoutException("no answer from the MCP server")),
            HEADERS_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        request.onResponseContentSource((response, content) ->
        {
            deadline.cancel(false);
            answer.complete(Exchange.of(response, content));
        });
        request.send(result ->
        {
            deadline.cancel(false);
            if (result.isFailed() && !answer.isDone())
            {
                boolean timedOut = result.getFailure() instanceof TimeoutException;
                answer.completeExceptionally(timedOut
                    ? new GatewayException(HttpStatus.GATEWAY_TIMEOUT_504, "upstream_timeout", "the MCP server did not answer in time")
                    : unreachable());
            }
        });
        return answer;
    }

    private static GatewayException unreachable()
    {
        return new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_unreachable", "the MCP server could not be reached");
    }
}
