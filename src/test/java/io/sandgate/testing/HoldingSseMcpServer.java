package io.sandgate.testing;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.FutureCallback;

/**
 * A 2024-11-05 HTTP+SSE MCP server whose tools work until the test says so: {@code GET /sse} opens
 * a session's stream and announces {@code /message?sessionId=n}; a POST there is accepted (202) at
 * once, {@code initialize} answered on the stream, and every {@code tools/call} counted and held,
 * its result sent on the stream only by {@link #answerAll}. The count is of calls that reached the
 * server, so a test can prove that one never did.
 */
public final class HoldingSseMcpServer implements AutoCloseable
{
    /** A request's id, a number or a string, as it is written in the request (a string keeps its quotes). */
    /** A call's argument {@code tag}, named in its answer. */
    private static final Pattern TAG = Pattern.compile("\"tag\"\\s*:\\s*\"([^\"]*)\"");
    private static final Pattern ID = Pattern.compile("\"id\"\\s*:\\s*(\\d+|\"(?:[^\"\\\\]|\\\\.)*\")");

    private final Server server;
    private final AtomicInteger sessions = new AtomicInteger();
    private final Map<String, Stream> streams = new ConcurrentHashMap<>();
    private final Queue<Held> held = new ConcurrentLinkedQueue<>();
    private final AtomicInteger toolCalls = new AtomicInteger();

    /** One session's open event stream; writes to it one at a time. */
    private record Stream(Response response, Callback done)
    {
        synchronized void event(String data)
        {
            FutureCallback written = new FutureCallback();
            Content.Sink.write(response, false, "event: message\ndata: " + data + "\n\n", written);
            try
            {
                written.get(5, TimeUnit.SECONDS);
            }
            catch (Exception x)
            {
                throw new IllegalStateException("the gateway did not take an event", x);
            }
        }
    }

    private record Held(Stream stream, String id, String tag)
    {
    }

    private HoldingSseMcpServer()
    {
        server = LoopbackServers.serve("holding-sse-mcp", new Handler.Abstract()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception
            {
                String path = Request.getPathInContext(request);
                if ("GET".equals(request.getMethod()) && "/sse".equals(path))
                    return open(response, callback);
                if ("POST".equals(request.getMethod()) && "/message".equals(path))
                    return message(request, response, callback);
                Response.writeError(request, response, callback, 404);
                return true;
            }
        });
    }

    public static HoldingSseMcpServer start()
    {
        return new HoldingSseMcpServer();
    }

    /** The SSE endpoint, for {@code transport: sse}. */
    public URI sseUrl()
    {
        return URI.create("http://127.0.0.1:" + LoopbackServers.port(server) + "/sse");
    }

    /** {@code tools/call} requests that reached the server, answered or not. */
    public int toolCalls()
    {
        return toolCalls.get();
    }

    /** Calls received and not yet answered. */
    public int held()
    {
        return held.size();
    }

    /** Answers every held call, on its session's stream, with the text {@code done <id>}, then {@code  for <tag>} when the call named one. */
    public void answerAll()
    {
        for (Held call; (call = held.poll()) != null; )
        {
            call.stream().event("{\"jsonrpc\":\"2.0\",\"id\":" + call.id()
                + ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done " + call.id().replace("\"", "")
                + (call.tag() == null ? "" : " for " + call.tag()) + "\"}]}}");
        }
    }

    /**
     * Forgets every session, their streams left open: as a server restarted behind a proxy that
     * kept the connections, it answers their messages 404 from now on.
     */
    public void forgetSessions()
    {
        streams.clear();
    }

    /** Sessions whose streams are open and known. */
    public int sessions()
    {
        return streams.size();
    }

    private boolean open(Response response, Callback callback)
    {
        String session = String.valueOf(sessions.incrementAndGet());
        response.setStatus(200);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
        Stream stream = new Stream(response, callback);
        streams.put(session, stream);
        FutureCallback written = new FutureCallback();
        Content.Sink.write(response, false, "event: endpoint\ndata: /message?sessionId=" + session + "\n\n", written);
        return true;
    }

    private boolean message(Request request, Response response, Callback callback) throws Exception
    {
        Stream stream = streams.get(Request.extractQueryParameters(request).getValue("sessionId"));
        String body = Content.Source.asString(request, StandardCharsets.UTF_8);
        if (stream == null)
        {
            Response.writeError(request, response, callback, 404);
            return true;
        }
        response.setStatus(202);
        callback.succeeded();
        Matcher id = ID.matcher(body);
        String requestId = id.find() ? id.group(1) : null;
        if (body.contains("\"initialize\""))
        {
            stream.event("{\"jsonrpc\":\"2.0\",\"id\":" + requestId + ",\"result\":{\"protocolVersion\":\"2024-11-05\","
                + "\"capabilities\":{\"tools\":{}},\"serverInfo\":{\"name\":\"holding\",\"version\":\"1\"}}}");
        }
        else if (body.contains("\"tools/call\""))
        {
            toolCalls.incrementAndGet();
            Matcher tag = TAG.matcher(body);
            held.add(new Held(stream, requestId, tag.find() ? tag.group(1) : null));
        }
        return true;
    }

    @Override
    public void close()
    {
        streams.values().forEach(stream -> stream.done().succeeded());
        LoopbackServers.stop(server, "holding HTTP+SSE MCP server");
    }
}
