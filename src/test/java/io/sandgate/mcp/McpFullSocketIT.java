package io.sandgate.mcp;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RunningGateway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client that stops reading fills its socket with keepalives until one of them cannot be
 * written, with no event being written to it. That keepalive waits in the stream's queue, no
 * thread waiting with it; the streams of other clients keep getting theirs, and the stuck one ends
 * at the idle timeout. Sent in turn by one job, the keepalive of every other stream of the replica
 * once waited behind the stuck write until the idle timeout; then each stream's own schedule held
 * a worker in that write instead.
 */
class McpFullSocketIT
{
    private static final Duration KEEPALIVE = Duration.ofMillis(50);
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(5);
    /** Keepalives the client that reads must get in a row, each within a few intervals, while the other one is stuck. */
    private static final int IN_A_ROW = 10;

    private final McpUpstream upstream = McpUpstream.start();

    @RegisterExtension
    final GatewayExtension gateway = GatewayExtension.manual(config -> config
        .set("log.access", "false")
        .set("server.idle-timeout", IDLE_TIMEOUT.toMillis() + "ms")
        .set("mcp.keepalive-interval", KEEPALIVE.toMillis() + "ms")
        .set("mcp.servers", List.of(Map.of("name", "stream", "url", upstream.streamableUrl(), "transport", "streamable"))));

    @AfterEach
    void stop()
    {
        upstream.close();
    }

    @Test
    void keepaliveThatCannotBeWritten_delaysNoOtherStreamsKeepalives_andEndsWithItsConnection() throws Exception
    {
        RunningGateway replica = gateway.startAnother();
        try (ClientStreamProbes.KeepaliveCount keepalives = ClientStreamProbes.readingClient(replica.uri("/mcp/stream/sse"));
             Socket stuck = new Socket())
        {
            // The smallest buffers on both ends, so that keepalives alone fill them within seconds.
            replica.acceptedSendBufferSize(1);
            stuck.setReceiveBufferSize(1);
            stuck.connect(new InetSocketAddress("127.0.0.1", replica.port()));
            ClientStreamProbes.requestStream(stuck, "/mcp/stream/sse");
            // Nothing read past the endpoint event, by which time the gateway has accepted the connection.
            endpointEvent(new BufferedReader(new InputStreamReader(stuck.getInputStream(), StandardCharsets.UTF_8)));
            replica.acceptedSendBufferSize(-1);
            assertEquals(2.0, streams(replica));

            // Each interval or so, another keepalive reaches the client that reads, while the
            // other one fills up; no thread waits for it meanwhile, and it ends at the idle timeout.
            AtomicBoolean threadWaited = new AtomicBoolean();
            AtomicInteger inARow = new AtomicInteger();
            AtomicInteger seen = new AtomicInteger(keepalives.get());
            AtomicLong lastKeepaliveNanos = new AtomicLong(System.nanoTime());
            await("the stuck stream ends").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(20)).until(() ->
            {
                threadWaited.compareAndSet(false, ClientStreamProbes.waitingInClientStream());
                if (keepalives.get() > seen.get())
                {
                    seen.set(keepalives.get());
                    inARow.incrementAndGet();
                    lastKeepaliveNanos.set(System.nanoTime());
                }
                // A second at most, on a busy machine too; waiting behind a stuck write, it was the idle timeout.
                assertTrue(System.nanoTime() - lastKeepaliveNanos.get() < KEEPALIVE.multipliedBy(20).toNanos(),
                    "keepalive " + (inARow.get() + 1) + " in a row to the client that reads");
                return streams(replica) == 1.0;
            });
            assertFalse(threadWaited.get(), "a thread waited for the stuck client");
            assertTrue(inARow.get() >= IN_A_ROW, "keepalives to the client that reads: " + inARow.get());
            int after = keepalives.get();
            await("keepalives go on").atMost(KEEPALIVE.multipliedBy(20)).until(() -> keepalives.get() > after);
        }
    }

    /** Reads the stream up to the end of its endpoint event, its first. */
    private static void endpointEvent(BufferedReader stream) throws Exception
    {
        boolean endpoint = false;
        for (String line; (line = stream.readLine()) != null; )
        {
            if (line.equals("event: endpoint"))
                endpoint = true;
            else if (endpoint && line.isEmpty())
                return;
        }
        throw new AssertionError("the stream ended before its endpoint event");
    }

    private static double streams(RunningGateway replica)
    {
        return replica.sandgate().metrics().get("sandgate.mcp.streams").gauge().value();
    }
}
