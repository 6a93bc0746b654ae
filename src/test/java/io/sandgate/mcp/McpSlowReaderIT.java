package io.sandgate.mcp;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RawHttp;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client that stops reading its SSE stream holds up only itself, holds no thread of the gateway,
 * and loses nothing: its answers wait in the session's log while it does not read, and reach it in
 * order once it reads again. The replica once sent every stream's keepalive from one job, in turn:
 * waiting there for a stream whose answer could not be written, it left every other client of the
 * replica without keepalives, for proxies in front of them to cut, for as long as the slow reader
 * pleased; and each answer waiting for the slow reader held a worker while it waited.
 */
class McpSlowReaderIT
{
    private static final Duration KEEPALIVE = Duration.ofMillis(500);
    /** Answers of 2 MB each, far more than the socket buffers between the gateway and a client that reads nothing. */
    private static final int LARGE_ANSWERS = 4;
    private static final Pattern SESSION = Pattern.compile("sessionId=([0-9a-f]{32})");
    private static final Pattern RESPONSE_ID = Pattern.compile("\"id\":(\\d+)");
    private static final RawSseClient CLIENT = new RawSseClient("stream");
    private static final McpUpstream upstream = McpUpstream.start();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("log.access", "false")
        .set("mcp.keepalive-interval", KEEPALIVE.toMillis() + "ms")
        .set("mcp.servers", List.of(Map.of("name", "stream", "url", upstream.streamableUrl(), "transport", "streamable"))));

    @AfterAll
    static void stop()
    {
        upstream.close();
    }

    @Test
    void clientThatStopsReading_delaysNoOtherStreamsKeepalives() throws Exception
    {
        try (ClientStreamProbes.KeepaliveCount keepalives = ClientStreamProbes.readingClient(gateway.uri("/mcp/stream/sse"));
             Socket attacker = new Socket())
        {
            // A small window, and nothing read past the endpoint event.
            attacker.setReceiveBufferSize(4096);
            attacker.connect(new InetSocketAddress("127.0.0.1", gateway.port()));
            ClientStreamProbes.requestStream(attacker, "/mcp/stream/sse");
            InputStream events = RawHttp.streamedBody(attacker.getInputStream());
            String session = sessionOf(events);
            assertEquals(202, CLIENT.post(gateway, session, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"slow\",\"version\":\"1\"}}}"));
            assertEquals(202, CLIENT.post(gateway, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
            String large = "x".repeat(2 * 1024 * 1024);
            for (int id = 1; id <= LARGE_ANSWERS; id++)
            {
                assertEquals(202, CLIENT.post(gateway, session, "{\"jsonrpc\":\"2.0\",\"id\":" + id
                    + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"" + large + "\"}}}"));
            }
            // The answers are more than the socket and the stream's queue take: delivery stops, holding no thread.
            await("the answers to the slow reader, stored for delivery").atMost(Duration.ofSeconds(30))
                .until(() -> gateway.sandgate().metrics().get("sandgate.mcp.messages.relayed").counter().count() >= 1 + LARGE_ANSWERS);
            await("no thread waits for the slow reader").atMost(Duration.ofSeconds(10)).during(KEEPALIVE.multipliedBy(4))
                .until(() -> !ClientStreamProbes.waitingInClientStream());

            // Each interval or two, another keepalive reaches the client that reads.
            for (int i = 0; i < 4; i++)
            {
                int seen = keepalives.get();
                await().atMost(KEEPALIVE.multipliedBy(3)).until(() -> keepalives.get() > seen);
            }

            // Reading again, the slow reader gets every answer, whole.
            List<Integer> answered = new ArrayList<>();
            List<String> seen = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            BufferedReader stream = new BufferedReader(new InputStreamReader(events, StandardCharsets.UTF_8));
            for (String line; answered.size() < LARGE_ANSWERS && System.nanoTime() < deadline && (line = stream.readLine()) != null; )
            {
                seen.add(line.substring(0, Math.min(line.length(), 80)));
                Matcher id = RESPONSE_ID.matcher(line);
                if (line.startsWith("data: ") && line.contains(large) && id.find())
                    answered.add(Integer.parseInt(id.group(1)));
            }
            // In the log's order, which is the order the upstream answered in (the calls ran at once): each once.
            assertEquals(List.of(1, 2, 3, 4), answered.stream().sorted().toList(), () -> "read: " + seen.subList(0, Math.min(seen.size(), 40)));
        }
    }

    /** The session id of the endpoint event at the stream's start, read byte by byte so that nothing after it is taken from the socket. */
    private static String sessionOf(InputStream stream) throws Exception
    {
        for (String line; (line = lineOf(stream)) != null; )
        {
            Matcher session = SESSION.matcher(line);
            if (line.startsWith("data:") && session.find())
                return session.group(1);
        }
        throw new AssertionError("the stream ended before its endpoint event");
    }

    private static String lineOf(InputStream stream) throws IOException
    {
        StringBuilder line = new StringBuilder();
        for (int b; (b = stream.read()) != '\n'; )
        {
            if (b < 0)
                return null;
            line.append((char)b);
        }
        return line.toString();
    }
}
