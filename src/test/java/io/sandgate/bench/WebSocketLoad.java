package io.sandgate.bench;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;

/**
 * WebSocket clients for the side-by-side benchmark, on Jetty's WebSocketClient.
 *
 * <ul>
 * <li>{@code echo URL CONNECTIONS SECONDS SIZE [COOKIE]}: every connection sends a text message of
 *     SIZE bytes, waits for its echo and sends the next (ping-pong). Round trips after the first
 *     second are recorded; prints one {@code RESULT} line with messages per second and percentiles.</li>
 * <li>{@code idle URL COUNT STOP_FILE [COOKIE]}: opens COUNT sessions (256 handshakes at a time),
 *     prints {@code RESULT open=... failed=...}, then holds them silent until STOP_FILE exists.</li>
 * </ul>
 * COOKIE is a whole {@code name=value} pair sent on the upgrade request.
 */
public final class WebSocketLoad
{
    private WebSocketLoad()
    {
    }

    public static void main(String[] args) throws Exception
    {
        String mode = args[0];
        URI uri = URI.create(args[1]);
        int cookieArg = mode.equals("echo") ? 5 : 4;
        String cookie = args.length > cookieArg ? args[cookieArg] : "";
        QueuedThreadPool threads = new QueuedThreadPool(64);
        threads.setName("ws-load");
        HttpClient http = new HttpClient();
        http.setExecutor(threads);
        http.setMaxConnectionsPerDestination(Integer.MAX_VALUE);
        http.setMaxRequestsQueuedPerDestination(Integer.MAX_VALUE);
        http.setConnectTimeout(30_000);
        WebSocketClient client = new WebSocketClient(http);
        client.setIdleTimeout(Duration.ofHours(1));
        client.setMaxTextMessageSize(16 * 1024 * 1024);
        client.start();
        int status = 0;
        try
        {
            if (mode.equals("echo"))
                echo(client, uri, Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]), cookie);
            else
                idle(client, uri, Integer.parseInt(args[2]), Path.of(args[3]), cookie);
        }
        catch (Exception x)
        {
            x.printStackTrace();
            status = 1;
        }
        // Jetty's threads are not daemons: without an explicit exit a failed run would hang.
        System.exit(status);
    }

    private static ClientUpgradeRequest upgrade(String cookie)
    {
        ClientUpgradeRequest request = new ClientUpgradeRequest();
        if (!cookie.isEmpty())
            request.setHeader("Cookie", cookie);
        return request;
    }

    private static void echo(WebSocketClient client, URI uri, int connections, int seconds, int size, String cookie) throws Exception
    {
        String message = "x".repeat(size);
        Samples samples = new Samples();
        AtomicLong errors = new AtomicLong();
        List<PingPong> all = new ArrayList<>();
        for (int i = 0; i < connections; i++)
        {
            PingPong pingPong = new PingPong(message, samples, errors);
            client.connect(pingPong, uri, upgrade(cookie)).get(30, TimeUnit.SECONDS);
            all.add(pingPong);
        }
        // The clock starts once every connection is open: handshakes are not part of the round trips.
        long recordFrom = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
        long end = recordFrom + TimeUnit.SECONDS.toNanos(seconds);
        all.forEach(pingPong -> pingPong.start(recordFrom, end));
        Thread.sleep(Math.max(0, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())) + 200);
        long[] sorted = samples.sorted();
        System.out.printf(java.util.Locale.ROOT, "RESULT connections=%d messages=%d msgs_per_s=%.0f errors=%d %s%n",
            connections, sorted.length, sorted.length / (double)seconds, errors.get(), Samples.percentiles(sorted));
    }

    private static void idle(WebSocketClient client, URI uri, int count, Path stop, String cookie) throws Exception
    {
        Semaphore handshakes = new Semaphore(256);
        AtomicInteger open = new AtomicInteger();
        AtomicInteger failed = new AtomicInteger();
        List<CompletableFuture<Session>> sessions = new ArrayList<>(count);
        for (int i = 0; i < count; i++)
        {
            handshakes.acquire();
            CompletableFuture<Session> session = client.connect(new Silent(), uri, upgrade(cookie));
            session.whenComplete((s, x) ->
            {
                (x == null ? open : failed).incrementAndGet();
                handshakes.release();
            });
            sessions.add(session);
        }
        handshakes.acquire(256);
        System.out.printf("RESULT open=%d failed=%d%n", open.get(), failed.get());
        System.out.flush();
        while (!Files.exists(stop))
            Thread.sleep(200);
    }

    /**
     * One connection's ping-pong loop: the echo of a message triggers the next one. Public, as Jetty
     * requires of listener classes.
     */
    public static final class PingPong implements Session.Listener.AutoDemanding
    {
        private final String message;
        private final Samples samples;
        private final AtomicLong errors;
        private volatile long recordFrom;
        private volatile long end;
        private volatile Session session;
        private volatile long sentAt;

        PingPong(String message, Samples samples, AtomicLong errors)
        {
            this.message = message;
            this.samples = samples;
            this.errors = errors;
        }

        void start(long recordFrom, long end)
        {
            this.recordFrom = recordFrom;
            this.end = end;
            next();
        }

        @Override
        public void onWebSocketOpen(Session session)
        {
            this.session = session;
        }

        private void next()
        {
            sentAt = System.nanoTime();
            if (sentAt < end)
                session.sendText(message, Callback.from(() -> { }, x -> errors.incrementAndGet()));
        }

        @Override
        public void onWebSocketText(String echo)
        {
            long now = System.nanoTime();
            if (sentAt >= recordFrom && now <= end)
                samples.add(now - sentAt);
            next();
        }

        @Override
        public void onWebSocketError(Throwable cause)
        {
            errors.incrementAndGet();
        }
    }

    /** An idle session: reads whatever comes (pings are answered by Jetty), sends nothing. */
    public static final class Silent implements Session.Listener.AutoDemanding
    {
    }
}
