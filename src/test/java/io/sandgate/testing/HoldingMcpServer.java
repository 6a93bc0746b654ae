package io.sandgate.testing;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;

/**
 * An MCP server as slow as a tool that works for minutes: it reads each JSON-RPC request and
 * answers nothing until the test says so, holding no thread meanwhile. Then every held call gets
 * the result {@code "done <id>"}.
 */
public final class HoldingMcpServer implements AutoCloseable
{
    private final Server server;
    private final Queue<Held> held = new ConcurrentLinkedQueue<>();

    private record Held(String id, Response response, Callback callback)
    {
    }

    private HoldingMcpServer()
    {
        server = LoopbackServers.serve("holding-mcp", new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback)
            {
                Content.Source.asStringAsync(request, StandardCharsets.UTF_8).thenAccept(body ->
                    held.add(new Held(body.replaceAll("(?s).*\"id\"\\s*:\\s*(\\d+).*", "$1"), response, callback)));
                return true;
            }
        });
    }

    public static HoldingMcpServer start()
    {
        return new HoldingMcpServer();
    }

    /** The Streamable HTTP endpoint. */
    public URI url()
    {
        return URI.create("http://127.0.0.1:" + LoopbackServers.port(server) + "/mcp");
    }

    /** Calls read and not yet answered. */
    public int held()
    {
        return held.size();
    }

    /** Answers every held call with the text {@code done <id>}. */
    public void answerAll()
    {
        for (Held call; (call = held.poll()) != null; )
        {
            call.response().setStatus(200);
            call.response().getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
            Content.Sink.write(call.response(), true,
                "{\"jsonrpc\":\"2.0\",\"id\":" + call.id() + ",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"done " + call.id() + "\"}]}}",
                call.callback());
        }
    }

    @Override
    public void close()
    {
        LoopbackServers.stop(server, "holding MCP server");
    }
}
