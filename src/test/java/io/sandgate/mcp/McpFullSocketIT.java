package io.sandgate.mcp;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RunningGateway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A client that stops reading fills its socket with keepalives until one of them cannot be
 * written, with no event being written to it: its keepalive write waits, and it must wait alone.
 * Sent in turn by one job, the keepalive of every other stream of the replica waited behind it
 * until the idle timeout ended the stuck connection, for proxies in front of them to cut them;
 * each stream now has a schedule of its own.
 */
class McpFullSocketIT
{
    private static final Duration KEEPALIVE = Duration.ofMillis(50);
    private static final Duration IDLE_TIMEOUT = Duration.ofSeconds(5);
    /** Keepalives the client that reads must get in a row, each within a few intervals, while the other one is stuck. */
    private static final int IN_A_ROW = 10;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

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
        AtomicInteger keepalives = new AtomicInteger();
        HttpResponse<InputStream> reader = HTTP.send(HttpRequest.newBuilder(replica.uri("/mcp/stream/sse")).header("Accept", "text/event-stream").build(),
            HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, reader.statusCode());
        ClientStreamProbes.countKeepalives(reader.body(), keepalives);

        try (Socket stuck = new Socket())
        {
            // The smallest buffers on both ends, so that keepalives alone fill them within seconds.
            replica.acceptedSendBufferSize(1);
            stuck.setReceiveBufferSize(1);
            stuck.connect(new InetSocketAddress("127.0.0.1", replica.port()));
            OutputStream out = stuck.getOutputStream();
            out.write(("GET /mcp/stream/sse HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            // Nothing read past the endpoint event, by which time the gateway has accepted the connection.
            endpointEvent(new BufferedReader(new InputStreamReader(stuck.getInputStream(), StandardCharsets.UTF_8)));
            replica.acceptedSendBufferSize(-1);
            assertEquals(2.0, streams(replica));

            // Held for a few intervals: a write that waits only a moment is no stuck one.
            await("a keepalive that the full socket does not take, with no event being written").atMost(Duration.ofSeconds(60))
                .during(KEEPALIVE.multipliedBy(4)).until(() -> ClientStreamProbes.inClientStream("keepalive", true) && !ClientStreamProbes.inClientStream("event", true));

            // Each interval or so, another keepalive reaches the client that reads.
            for (int i = 0; i < IN_A_ROW; i++)
            {
                int seen = keepalives.get();
                // A second at most, on a busy machine too; waiting behind the stuck write, it was the idle timeout.
                await("keepalive " + (i + 1) + " in a row to the client that reads").atMost(KEEPALIVE.multipliedBy(20))
                    .until(() -> keepalives.get() > seen);
            }

            // The stuck write gives up at the idle timeout: the stream ends and its keepalives with it.
            await("the stuck stream ends").atMost(IDLE_TIMEOUT.multipliedBy(3)).until(() -> streams(replica) == 1.0);
            await("no keepalive write left waiting").atMost(Duration.ofSeconds(5)).until(() -> !ClientStreamProbes.inClientStream("keepalive", true));
            int seen = keepalives.get();
            await("keepalives go on").atMost(KEEPALIVE.multipliedBy(20)).until(() -> keepalives.get() > seen);
        }
        finally
        {
            reader.body().close();
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
