package io.sandgate.mcp;

import java.io.InputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fault tests at the protocol level, with a plain HTTP client so that every event id is visible:
 * the client's stream is on replica A and its POSTs go to replica B; then A dies, or Redis
 * restarts, and nothing the gateway accepted is lost or delivered twice.
 */
class McpResumeIT
{
    private static final Pattern RESPONSE_ID = Pattern.compile("\"id\":(\\d+)");
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final int CALLS = 100;

    private RedisServerProcess redis;
    private McpUpstream upstream;
    private RunningGateway replicaA;
    private RunningGateway replicaB;

    @RegisterExtension
    final GatewayExtension gateways = GatewayExtension.manual(config -> config
        .set("server.stop-timeout", "1s")
        .redisStore(redis)
        .set("store.redis.poll-interval", "200ms")
        .set("mcp.servers", List.of(Map.of("name", "stream", "url", upstream.streamableUrl(), "transport", "streamable"))));

    @BeforeEach
    void start() throws Exception
    {
        redis = RedisServerProcess.startPersistent();
        upstream = McpUpstream.start();
        replicaA = gateways.startAnother();
        replicaB = gateways.startAnother();
    }

    @AfterEach
    void stop() throws Exception
    {
        for (AutoCloseable c : new AutoCloseable[]{upstream, redis})
        {
            if (c != null)
                c.close();
        }
    }

    /** One SSE event as the client saw it. */
    record Event(String id, String name, String data)
    {
    }

    /** Reads an SSE stream on its own thread; a null-named event marks the end. */
    static final class Stream
    {
        final BlockingQueue<Event> events = new LinkedBlockingQueue<>();

        Stream(Gateway replica, String path, String lastEventId) throws Exception
        {
            HttpRequest.Builder request = HttpRequest.newBuilder(replica.uri().resolve(path)).header("Accept", "text/event-stream");
            if (lastEventId != null)
                request.header("Last-Event-ID", lastEventId);
            HttpResponse<InputStream> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
            assertEquals(200, response.statusCode());
            Thread reader = new Thread(() ->
            {
                try
                {
                    SseReader sse = new SseReader(response.body());
                    SseReader.Event event;
                    while ((event = sse.next()) != null)
                        events.add(new Event(event.id(), event.name(), event.data()));
                }
                catch (Exception x)
                {
                    // The replica died: that is the point of some tests.
                }
                events.add(new Event(null, null, null));
            }, "sse-reader");
            reader.setDaemon(true);
            reader.start();
        }

        Event next() throws InterruptedException
        {
            Event event = events.poll(15, TimeUnit.SECONDS);
            assertNotNull(event, "no event within 15 s");
            return event;
        }
    }

    static int post(Gateway replica, String sessionId, String json) throws Exception
    {
        HttpRequest request = HttpRequest.newBuilder(replica.uri().resolve("/mcp/stream/message?sessionId=" + sessionId))
            .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json)).timeout(Duration.ofSeconds(10)).build();
        return HTTP.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    static String call(int id)
    {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"m" + id + "\"}}}";
    }

    /** Opens the stream (on A here), initializes through {@code posts} (B here); returns the session id. */
    static String openSession(Stream stream, Gateway posts) throws Exception
    {
        Event endpoint = stream.next();
        assertEquals("endpoint", endpoint.name());
        String sessionId = endpoint.data().substring(endpoint.data().indexOf("sessionId=") + "sessionId=".length());
        assertEquals(202, post(posts, sessionId, "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-06-18\","
            + "\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}"));
        Event initialized = stream.next();
        assertTrue(initialized.data().contains("\"id\":0") && initialized.data().contains("protocolVersion"), initialized.data());
        assertNotNull(initialized.id(), "every event carries an id");
        assertEquals(202, post(posts, sessionId, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
        return sessionId;
    }

    /** Takes events until the stream ends or every call is answered; records response ids. */
    private static String collect(Stream stream, Map<Integer, Integer> answered) throws InterruptedException
    {
        String lastId = null;
        while (answered.size() < CALLS || answered.values().stream().anyMatch(n -> n > 1))
        {
            Event event = stream.next();
            if (event.name() == null)
                break;
            if (!"message".equals(event.name()))
                continue;
            lastId = event.id();
            Matcher m = RESPONSE_ID.matcher(event.data());
            if (event.data().contains("\"result\"") && m.find())
                answered.merge(Integer.parseInt(m.group(1)), 1, Integer::sum);
            if (answered.size() == CALLS)
                break;
        }
        return lastId;
    }

    @Test
    void replicaHoldingTheStreamDies_clientResumesOnTheOtherWithLastEventId_nothingLostOrDuplicated() throws Exception
    {
        Stream onA = new Stream(replicaA, "/mcp/stream/sse", null);
        String sessionId = openSession(onA, replicaB);
        Map<Integer, Integer> answered = new HashMap<>();

        for (int i = 1; i <= CALLS; i++)
        {
            assertEquals(202, post(replicaB, sessionId, call(i)), "call " + i);
            if (i == CALLS / 2)
            {
                // Let some answers reach the client, then kill the replica that holds its stream.
                while (answered.size() < 10)
                {
                    Event event = onA.next();
                    Matcher m = RESPONSE_ID.matcher(event.data());
                    if (event.data().contains("\"result\"") && m.find())
                        answered.merge(Integer.parseInt(m.group(1)), 1, Integer::sum);
                }
                replicaA.close();
                replicaA = null;
            }
        }
        String lastSeen = collect(onA, answered);
        assertTrue(answered.size() < CALLS, "the stream on A was cut before every answer arrived");

        Stream onB = new Stream(replicaB, "/mcp/stream/sse?sessionId=" + sessionId, lastSeen);
        assertEquals("endpoint", onB.next().name());
        collect(onB, answered);

        List<Integer> missing = new ArrayList<>();
        for (int i = 1; i <= CALLS; i++)
        {
            if (!answered.containsKey(i))
                missing.add(i);
        }
        assertEquals(List.of(), missing, "answers never delivered");
        assertTrue(answered.values().stream().allMatch(n -> n == 1), "answers delivered twice: " + answered);
    }

    @Test
    void deleteOnOneReplica_endsTheSessionOnAll() throws Exception
    {
        Stream onA = new Stream(replicaA, "/mcp/stream/sse", null);
        String sessionId = openSession(onA, replicaB);

        HttpResponse<String> deleted = HTTP.send(HttpRequest.newBuilder(replicaB.uri().resolve("/mcp/stream/mcp"))
            .header("Mcp-Session-Id", sessionId).DELETE().build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(204, deleted.statusCode());

        Event event;
        do
        {
            event = onA.next();
        }
        while (event.name() != null);
        assertEquals(404, post(replicaA, sessionId, call(1)));
        assertEquals(404, post(replicaB, sessionId, call(1)));
    }

    @Test
    void metrics_countRelayedMessagesAndResumes_andLostStaysZero() throws Exception
    {
        Stream onA = new Stream(replicaA, "/mcp/stream/sse", null);
        String sessionId = openSession(onA, replicaB);
        Event first = null;
        assertEquals(202, post(replicaB, sessionId, call(1)));
        while (first == null || !first.data().contains("\"result\""))
            first = onA.next();
        new Stream(replicaA, "/mcp/stream/sse?sessionId=" + sessionId, first.id());

        String metrics = HTTP.send(HttpRequest.newBuilder(replicaB.uri().resolve("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
        assertTrue(metrics.contains("sandgate_mcp_messages_lost_total 0.0"), metrics);
        assertTrue(Pattern.compile("sandgate_mcp_messages_relayed_total [1-9]").matcher(metrics).find(), metrics);
        String onAMetrics = HTTP.send(HttpRequest.newBuilder(replicaA.uri().resolve("/metrics")).build(), HttpResponse.BodyHandlers.ofString()).body();
        assertTrue(onAMetrics.contains("sandgate_mcp_replays_total 1.0"), onAMetrics);
        assertTrue(Pattern.compile("sandgate_mcp_streams [1-9]").matcher(onAMetrics).find(), onAMetrics);
    }

    @Test
    void redisRestartsMidRun_everyAcceptedMessageIsDeliveredOnce() throws Exception
    {
        Stream onA = new Stream(replicaA, "/mcp/stream/sse", null);
        String sessionId = openSession(onA, replicaB);
        AtomicInteger refused = new AtomicInteger();
        for (int i = 1; i <= CALLS; i++)
        {
            if (i == CALLS / 2)
                redis.kill();
            String body = call(i);
            // While Redis is down a POST is refused (503): not accepted, so the client retries it.
            // After a few refusals Redis comes back, with its append-only file.
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(100)).until(() ->
            {
                int status = post(replicaB, sessionId, body);
                if (status == 503 && refused.incrementAndGet() == 5)
                    redis.restart();
                return status == 202;
            });
        }
        Map<Integer, Integer> answered = new HashMap<>();
        collect(onA, answered);
        assertEquals(CALLS, answered.size(), "answers: " + answered.keySet());
        assertTrue(answered.values().stream().allMatch(n -> n == 1), "answers delivered twice: " + answered);
        assertTrue(refused.get() >= 5, "Redis was down for some POSTs");
    }
}
