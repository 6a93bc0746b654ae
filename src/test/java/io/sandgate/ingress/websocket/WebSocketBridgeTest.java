package io.sandgate.ingress.websocket;

import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledThreadPoolExecutor;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.SandgateConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.ingress.Ingress;
import io.sandgate.store.Store;
import io.sandgate.web.ClientInfo;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bridge's life cycle as the composition root drives it: built, started, closed, with its
 * pings on the shared timer rather than on a thread of its own.
 */
class WebSocketBridgeTest
{
    private final Schedulers schedulers = Schedulers.create();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SandgateConfig config = ConfigLoader.fromValues(Map.of("ingress.cookie.secret", "0123456789abcdef0123456789abcdef"));
    // Its own threads: the test counts what the bridge alone puts on the timer.
    private final Store store = Store.create(config, registry, Schedulers.create());

    @AfterEach
    void close()
    {
        schedulers.close();
        store.close();
    }

    private WebSocketBridge bridge()
    {
        Ingress ingress = new Ingress(config.ingress(), "", store.routes(), new ClientInfo(List.of()), registry, Clock.systemUTC());
        return new WebSocketBridge(ingress, List.of(), registry, schedulers, BrowserUpgrade.forThisContainer());
    }

    private int timerTasks()
    {
        return ((ScheduledThreadPoolExecutor)schedulers.timer()).getQueue().size();
    }

    @Test
    void start_schedulesThePingsOnTheSharedTimer_andCloseCancelsThem() throws Exception
    {
        WebSocketBridge bridge = bridge();
        assertEquals(0, timerTasks(), "nothing runs before start");

        bridge.start();
        assertEquals(1, timerTasks());

        bridge.close();
        assertEquals(0, timerTasks());
    }

    @Test
    void liveSessions_areEmptyUntilABrowserConnects() throws Exception
    {
        WebSocketBridge bridge = bridge();
        bridge.start();
        try
        {
            assertTrue(bridge.liveSessions().isEmpty());
            assertEquals(0, registry.get("sandgate.ingress.websocket.sessions").gauge().value());
        }
        finally
        {
            bridge.close();
        }
    }

    @Test
    void close_withoutStart_isHarmless() throws Exception
    {
        bridge().close();

        assertEquals(0, timerTasks());
    }
}
