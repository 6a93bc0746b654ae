package io.sandgate.ingress.lifecycle;

import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.ingress.websocket.WebSocketBridgeIT;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.RedisReplicas;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.websocket.api.Callback;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A busy desktop costs the store nothing per frame: a WebSocket carrying a thousand frames a second
 * each way through a replica writes its sandbox's activity once per flush, counted by a real
 * {@code redis-server}'s own statistics ({@code INFO commandstats}).
 */
class ActivityWritesIT extends RedisReplicas
{
    private static final Duration FLUSH = Duration.ofMillis(500);
    private static final int FRAMES = 3000;
    private static final Pattern CALLS = Pattern.compile("cmdstat_([\\w|]+):calls=(\\d+)");

    private final ScheduledExecutorService sender = Executors.newSingleThreadScheduledExecutor();
    private WebSocketBackend desktops;
    private WebSocketClient browsers;

    @Override
    protected void configure(GatewayConfig config)
    {
        config.set("log.access", "false").set("ingress.activity.flush", FLUSH.toMillis() + "ms");
    }

    @Override
    protected void beforeReplicas() throws Exception
    {
        desktops = WebSocketBackend.start("desktop");
        raw.hset("vnc_sandboxes", "7003", desktops.hostPort());
        browsers = new WebSocketClient();
        browsers.start();
    }

    @AfterEach
    void stopOwnFixtures() throws Exception
    {
        sender.shutdownNow();
        browsers.stop();
        desktops.close();
    }

    @Test
    void aWebSocketCarryingAThousandFramesASecond_costsAHandfulOfWritesPerFlush() throws Exception
    {
        WebSocketBridgeIT.Browser desktop = new WebSocketBridgeIT.Browser();
        Session session = browsers.connect(desktop, URI.create("ws://127.0.0.1:" + replica1.port() + "/vnc/7003/websockify")).get(5, TimeUnit.SECONDS);
        // The opening's own write is behind us.
        await().atMost(Duration.ofSeconds(5)).until(() -> flushes(replica1) >= 1 && !desktop.texts.isEmpty());
        Map<String, Long> before = commands();
        double flushesBefore = flushes(replica1);
        double entriesBefore = entries(replica1);
        long start = System.nanoTime();

        // Ten frames every 10 ms, each echoed: a thousand a second each way.
        AtomicInteger sent = new AtomicInteger();
        sender.scheduleAtFixedRate(() ->
        {
            for (int i = 0; i < 10 && sent.get() < FRAMES; i++)
                session.sendText("frame " + sent.incrementAndGet(), Callback.NOOP);
        }, 0, 10, TimeUnit.MILLISECONDS);
        await().atMost(Duration.ofSeconds(15)).until(() -> desktop.texts.stream().filter(t -> t.startsWith("echo:frame")).count() == FRAMES);
        // The last frames' flush too.
        double flushesDuring = flushes(replica1) - flushesBefore;
        await().atMost(FLUSH.multipliedBy(4)).until(() -> flushes(replica1) > flushesBefore + flushesDuring);

        double seconds = (System.nanoTime() - start) / 1e9;
        Map<String, Long> spent = new HashMap<>(commands());
        before.forEach((command, calls) -> spent.merge(command, -calls, Long::sum));
        spent.values().removeIf(calls -> calls == 0);
        long hashWrites = spent.getOrDefault("hset", 0L) + spent.getOrDefault("hmset", 0L);
        long all = spent.values().stream().mapToLong(Long::longValue).sum();
        double flushes = flushes(replica1) - flushesBefore;
        double entries = entries(replica1) - entriesBefore;
        System.out.printf("%d frames each way in %.1f s: %.0f flushes, %.0f activity entries, %d hash writes, %d Redis commands in all %s%n",
            FRAMES, seconds, flushes, entries, hashWrites, all, spent);

        // At most one flush per period, each writing the one sandbox once (and its WebSocket count).
        assertTrue(flushes <= seconds / (FLUSH.toMillis() / 1000.0) + 2, flushes + " flushes in " + seconds + " s");
        assertTrue(entries <= flushes, entries + " entries in " + flushes + " flushes");
        assertTrue(hashWrites <= 2 * flushes, hashWrites + " hash writes in " + flushes + " flushes");
        // Everything Redis saw meanwhile (the flushes, leadership, the route cache): nowhere near one per frame.
        assertTrue(all < FRAMES / 20, all + " commands for " + 2 * FRAMES + " frames");
    }

    private Map<String, Long> commands()
    {
        Map<String, Long> calls = new HashMap<>();
        Matcher m = CALLS.matcher(String.valueOf(raw.command("INFO", "commandstats")));
        while (m.find())
        {
            if (!m.group(1).equals("info"))
                calls.put(m.group(1), Long.parseLong(m.group(2)));
        }
        return calls;
    }

    private static double flushes(RunningGateway replica)
    {
        return replica.sandgate().metrics().get("sandgate.sandbox.activity.flushes").tag("outcome", "ok").counter().count();
    }

    private static double entries(RunningGateway replica)
    {
        return replica.sandgate().metrics().get("sandgate.sandbox.activity.entries").counter().count();
    }
}
