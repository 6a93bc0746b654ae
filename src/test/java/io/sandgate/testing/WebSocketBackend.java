package io.sandgate.testing;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.server.WebSocketUpgradeHandler;

/**
 * A sandbox's WebSocket server on a real Jetty, on 127.0.0.1 port 0. Every connection echoes and
 * records what it gets; a few text commands make it act: {@code die} drops the TCP connection
 * without a close frame (a pod dying), {@code close:CODE:REASON} closes with that status,
 * {@code flood} sends 64 KiB binary messages as fast as the connection takes them. At the path
 * {@code /stall} it reads nothing at all, a sandbox that stopped reading. It picks {@code binary}
 * when offered as subprotocol, and permessage-deflate when offered (Jetty's default).
 */
public final class WebSocketBackend implements AutoCloseable
{
    public static final int FLOOD_MESSAGE = 64 * 1024;

    private final Server server;
    private final ServerConnector connector;
    private final String name;
    public final List<String> texts = new CopyOnWriteArrayList<>();
    public final List<byte[]> binaries = new CopyOnWriteArrayList<>();
    public final AtomicInteger pings = new AtomicInteger();
    public final AtomicInteger pongs = new AtomicInteger();
    public final AtomicInteger connections = new AtomicInteger();
    public final AtomicLong flooded = new AtomicLong();
    public final AtomicReference<String> lastClose = new AtomicReference<>();
    public final AtomicReference<String> lastPath = new AtomicReference<>();
    public final AtomicReference<String> lastCookie = new AtomicReference<>();
    public final AtomicReference<String> lastExtensions = new AtomicReference<>();
    public final AtomicReference<String> lastTraceparent = new AtomicReference<>();

    private WebSocketBackend(String name) throws Exception
    {
        this.name = name;
        server = new Server();
        connector = LoopbackServers.connector(server);
        server.setHandler(WebSocketUpgradeHandler.from(server, container ->
        {
            container.setMaxBinaryMessageSize(64L * 1024 * 1024);
            container.addMapping("/*", (request, response, callback) ->
            {
                if (request.hasSubProtocol("binary"))
                    response.setAcceptedSubProtocol("binary");
                lastPath.set(request.getHttpURI().getPathQuery());
                lastCookie.set(request.getHeaders().get("Cookie"));
                lastExtensions.set(request.getHeaders().get("Sec-WebSocket-Extensions"));
                lastTraceparent.set(request.getHeaders().get("traceparent"));
                if (request.getHttpURI().getPath().equals("/stall"))
                    return new Stalled();
                return new Endpoint();
            });
        }));
        server.start();
    }

    public static WebSocketBackend start(String name) throws Exception
    {
        return new WebSocketBackend(name);
    }

    public String hostPort()
    {
        return "127.0.0.1:" + connector.getLocalPort();
    }

    @Override
    public void close() throws Exception
    {
        server.stop();
    }

    public final class Endpoint implements Session.Listener.AutoDemanding
    {
        private Session session;
        private volatile boolean flooding;

        @Override
        public void onWebSocketOpen(Session session)
        {
            this.session = session;
            connections.incrementAndGet();
            session.sendText("hello from " + name, Callback.NOOP);
        }

        @Override
        public void onWebSocketText(String message)
        {
            texts.add(message);
            if (message.equals("die"))
            {
                session.disconnect();
            }
            else if (message.startsWith("close:"))
            {
                String[] parts = message.split(":", 3);
                session.close(Integer.parseInt(parts[1]), parts[2], Callback.NOOP);
            }
            else if (message.equals("flood"))
            {
                flooding = true;
                Thread flood = new Thread(this::flood, "ws-flood");
                flood.setDaemon(true);
                flood.start();
            }
            else
            {
                session.sendText("echo:" + message, Callback.NOOP);
            }
        }

        /** Sends as fast as the connection accepts: the total tells how much the path buffers. */
        private void flood()
        {
            byte[] chunk = new byte[FLOOD_MESSAGE];
            while (flooding && session.isOpen())
            {
                Callback.Completable sent = new Callback.Completable();
                session.sendBinary(ByteBuffer.wrap(chunk), sent);
                try
                {
                    sent.get(30, TimeUnit.SECONDS);
                    flooded.addAndGet(chunk.length);
                }
                catch (Exception x)
                {
                    return;
                }
            }
        }

        @Override
        public void onWebSocketBinary(ByteBuffer payload, Callback callback)
        {
            byte[] bytes = new byte[payload.remaining()];
            payload.get(bytes);
            binaries.add(bytes);
            session.sendBinary(ByteBuffer.wrap(bytes), callback);
        }

        @Override
        public void onWebSocketPing(ByteBuffer payload)
        {
            pings.incrementAndGet();
            session.sendPong(payload, Callback.NOOP);
        }

        @Override
        public void onWebSocketPong(ByteBuffer payload)
        {
            pongs.incrementAndGet();
        }

        @Override
        public void onWebSocketClose(int statusCode, String reason)
        {
            flooding = false;
            lastClose.set(statusCode + ":" + reason);
        }
    }

    /** Reads nothing once open: what a client sends piles up in the socket buffers, and then in front of them. */
    public final class Stalled implements Session.Listener
    {
        @Override
        public void onWebSocketOpen(Session session)
        {
            connections.incrementAndGet();
        }
    }
}
