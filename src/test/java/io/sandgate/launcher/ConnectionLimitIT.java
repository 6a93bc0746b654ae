package io.sandgate.launcher;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.websocket.api.Session;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client holds at most {@code server.max-connections-per-client} connections open at once, on
 * the listeners together, whether they are idle, busy or upgraded: one more is closed as soon as it
 * is accepted, before it is read, and a place frees when one of its connections closes. A trusted
 * proxy, whose connections carry many clients, is not counted.
 */
class ConnectionLimitIT
{
    private static final int LIMIT = 3;
    @AutoClose
    private static WebSocketBackend sandbox;
    @AutoClose("stop")
    private static WebSocketClient client;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("server.internal-port", "0")
        .set("server.max-connections-per-client", Integer.toString(LIMIT))
        .set("ingress.static-routes", Map.of("1", sandbox.hostPort())));

    @BeforeAll
    static void start() throws Exception
    {
        sandbox = WebSocketBackend.start("s1");
        client = new WebSocketClient();
        client.start();
    }

    /** Each test counts from none: the closes of the test before reach the gateway a moment after they are made. */
    @BeforeEach
    void noConnectionLeftOpen()
    {
        await().atMost(Duration.ofSeconds(10)).until(() -> gateway.sandgate().metrics().get("sandgate.connections.counted").gauge().value() == 0);
    }

    /**
     * The attack: a client opens connections and sends nothing, each held until the idle timeout,
     * to use up the gateway's file descriptors. Here on both listeners.
     */
    @Test
    void connectionsAboveTheLimit_areClosedAsAccepted_onBothListeners_untilOneCloses() throws Exception
    {
        double refusedBefore = refused(gateway.sandgate().metrics());
        List<RawHttp.Kept> held = new ArrayList<>();
        try
        {
            held.add(served(gateway.port()));
            held.add(served(gateway.internalPort()));
            held.add(served(gateway.port()));
            for (int port : new int[] {gateway.port(), gateway.internalPort()})
            {
                try (RawHttp.Kept refused = new RawHttp.Kept(port, "127.0.0.1"))
                {
                    assertTrue(refused.closedByPeer(), "a connection above the limit is closed before a byte is read");
                }
            }
            assertEquals(2, refused(gateway.sandgate().metrics()) - refusedBefore);
            // The held ones are still served.
            assertEquals(200, held.get(0).get("/healthz").status());

            held.remove(0).close();
            // The place frees when the gateway sees the close, a moment after ours.
            await().atMost(Duration.ofSeconds(10)).until(() -> aNewConnectionIsServed(gateway.port()));
        }
        finally
        {
            for (RawHttp.Kept kept : held)
                kept.close();
        }
    }

    /** A WebSocket holds its connection for hours; it keeps counting after the upgrade, as its tunnel. */
    @Test
    void anUpgradedWebSocket_keepsCounting_untilItCloses() throws Exception
    {
        List<RawHttp.Kept> held = new ArrayList<>();
        Session session = null;
        try
        {
            held.add(served(gateway.port()));
            ClientUpgradeRequest request = new ClientUpgradeRequest();
            request.setHeader("Origin", "http://127.0.0.1:" + gateway.port());
            session = client.connect(new Quiet(), gateway.wsUri("/vnc/1/websockify"), request).get(5, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(5)).until(() -> sandbox.connections.get() > 0);
            held.add(served(gateway.port()));
            try (RawHttp.Kept refused = new RawHttp.Kept(gateway.port(), "127.0.0.1"))
            {
                assertTrue(refused.closedByPeer(), "the WebSocket still counts after its upgrade");
            }

            session.close();
            await().atMost(Duration.ofSeconds(10)).until(() -> aNewConnectionIsServed(gateway.port()));
        }
        finally
        {
            if (session != null)
                session.disconnect();
            for (RawHttp.Kept kept : held)
                kept.close();
        }
    }

    @Test
    void aTrustedProxy_isNotCounted() throws Exception
    {
        try (RunningGateway behindProxy = gateway.startAnother(config -> config
            .set("server.max-connections-per-client", "1")
            .set("ingress.trusted-proxies", List.of("127.0.0.0/8"))))
        {
            List<RawHttp.Kept> held = new ArrayList<>();
            try
            {
                for (int i = 0; i < 3; i++)
                    held.add(served(behindProxy.port()));
                assertEquals(0, refused(behindProxy.sandgate().metrics()));
            }
            finally
            {
                for (RawHttp.Kept kept : held)
                    kept.close();
            }
        }
    }

    /** A browser's WebSocket that only holds its connection (public, for Jetty to call it). */
    public static final class Quiet extends Session.Listener.AbstractAutoDemanding
    {
    }

    /** A connection kept open, answered once. */
    private static RawHttp.Kept served(int port) throws Exception
    {
        RawHttp.Kept kept = new RawHttp.Kept(port, "127.0.0.1");
        try
        {
            assertEquals(200, kept.get("/healthz").status());
            return kept;
        }
        catch (Exception | Error x)
        {
            kept.close();
            throw x;
        }
    }

    /** Whether a new connection is served now (it is closed again), rather than refused. */
    private static boolean aNewConnectionIsServed(int port) throws Exception
    {
        try (RawHttp.Kept kept = new RawHttp.Kept(port, "127.0.0.1"))
        {
            return kept.get("/healthz").status() == 200;
        }
        catch (IOException refused)
        {
            return false;
        }
    }

    private static double refused(MeterRegistry metrics)
    {
        return metrics.get("sandgate.connections.refused").counter().count();
    }
}
