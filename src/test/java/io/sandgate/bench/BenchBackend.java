package io.sandgate.bench;

import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;

import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.server.WebSocketUpgradeHandler;

/**
 * The sandbox of the side-by-side benchmark: a plain Jetty core server (no servlets) on
 * 127.0.0.1 that answers {@code /1k} with 1 KiB and {@code /1m} with 1 MiB from pre-built buffers,
 * and echoes every WebSocket message at {@code /ws}. Every proxy under test forwards to this one
 * process, so the "direct" row is its own cost.
 *
 * <p>Run: {@code java -cp ... io.sandgate.bench.BenchBackend PORT}; it prints {@code ready PORT}.</p>
 */
public final class BenchBackend
{
    private static final ByteBuffer ONE_K = filled(1024);
    private static final ByteBuffer ONE_M = filled(1024 * 1024);

    private BenchBackend()
    {
    }

    public static void main(String[] args) throws Exception
    {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        QueuedThreadPool threads = new QueuedThreadPool(400);
        threads.setName("backend");
        Server server = new Server(threads);
        HttpConfiguration http = new HttpConfiguration();
        http.setSendServerVersion(false);
        http.setSendDateHeader(false);
        ServerConnector connector = new ServerConnector(server, new HttpConnectionFactory(http));
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        connector.setAcceptQueueSize(4096);
        connector.setIdleTimeout(3_600_000);
        server.addConnector(connector);

        AtomicInteger open = new AtomicInteger();
        WebSocketUpgradeHandler websocket = WebSocketUpgradeHandler.from(server, container ->
        {
            container.setIdleTimeout(java.time.Duration.ofHours(1));
            container.setMaxTextMessageSize(16 * 1024 * 1024);
            container.setMaxBinaryMessageSize(16 * 1024 * 1024);
            container.addMapping("/ws", (request, response, callback) -> new Echo(open));
        });
        websocket.setHandler(new Files());
        server.setHandler(websocket);
        server.start();
        System.out.println("ready " + connector.getLocalPort());
        server.join();
    }

    private static ByteBuffer filled(int size)
    {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++)
            bytes[i] = (byte)('a' + i % 26);
        return ByteBuffer.wrap(bytes).asReadOnlyBuffer();
    }

    /** Fixed-size bodies; a slice per response so concurrent writes never share a position. */
    private static final class Files extends Handler.Abstract.NonBlocking
    {
        @Override
        public boolean handle(Request request, Response response, Callback callback)
        {
            if (Request.getPathInContext(request).equals("/v1/traces"))
            {
                // An OTLP sink for the traced target: spans taken and dropped, as a collector's
                // receiver answers them.
                Content.Source.consumeAll(request, Callback.from(() ->
                {
                    response.setStatus(HttpStatus.OK_200);
                    response.write(true, null, callback);
                }, callback::failed));
                return true;
            }
            ByteBuffer body = switch (Request.getPathInContext(request))
            {
                case "/1k" -> ONE_K;
                case "/1m" -> ONE_M;
                default -> null;
            };
            if (body == null)
            {
                Response.writeError(request, response, callback, HttpStatus.NOT_FOUND_404);
                return true;
            }
            response.setStatus(HttpStatus.OK_200);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/octet-stream");
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.remaining());
            response.write(true, body.slice(), callback);
            return true;
        }
    }

    /**
     * Sends every message back as it came. Auto-demanding: the clients of this benchmark wait for
     * each echo before sending again, so there is nothing to push back on; pings are answered by
     * Jetty. Public, as Jetty requires of listener classes.
     */
    public static final class Echo implements Session.Listener.AutoDemanding
    {
        private final AtomicInteger open;
        private Session session;

        Echo(AtomicInteger open)
        {
            this.open = open;
        }

        @Override
        public void onWebSocketOpen(Session session)
        {
            this.session = session;
            open.incrementAndGet();
        }

        @Override
        public void onWebSocketText(String message)
        {
            session.sendText(message, org.eclipse.jetty.websocket.api.Callback.NOOP);
        }

        @Override
        public void onWebSocketBinary(ByteBuffer payload, org.eclipse.jetty.websocket.api.Callback callback)
        {
            session.sendBinary(payload, callback);
        }

        @Override
        public void onWebSocketClose(int status, String reason)
        {
            open.decrementAndGet();
        }
    }
}
