package io.sandgate.mcp;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Pattern;

import io.sandgate.mcp.RawSseClient.Event;
import io.sandgate.mcp.RawSseClient.Stream;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.sandgate.mcp.RawSseClient.call;
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
    private static final RawSseClient CLIENT = new RawSseClient("stream");
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final int CALLS = 100;

    private RedisServerProcess redis;
    private McpUpstream upstream;
    private RunningGateway replicaA;
    private RunningGateway replicaB;

    @RegisterExtension
    final GatewayExtension gateways = GatewayExtension.manual(config -> config
        // The sessions' safety poll at its default, as deployed: 30 s, longer than a client here
        // waits for an event, so recovery after a Redis restart must not lean on it.
        .redisStore(redis)
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
        Fixtures.closeInOrder(upstream, redis);
    }

    private Stream stream(Gateway replica, String query, String lastEventId) throws Exception
    {
        return CLIENT.stream(replica, query, lastEventId);
    }

    private static int post(Gateway replica, String sessionId, String json) throws Exception
    {
        return CLIENT.post(replica, sessionId, json);
    }

    /** Opens the stream on A, initializes through B; returns the session id. */
    private String openSession(Stream stream) throws Exception
    {
        return CLIENT.openSession(stream, replicaB);
    }

    private static String collect(Stream stream, Map<Integer, Integer> answered) throws InterruptedException
    {
        return RawSseClient.collect(stream, answered, CALLS);
    }

    @Test
    void replicaHoldingTheStreamDies_clientResumesOnTheOtherWithLastEventId_nothingLostOrDuplicated() throws Exception
    {
        Stream onA = stream(replicaA, "", null);
        String sessionId = openSession(onA);
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
                    if (event.resultId() >= 0)
                        answered.merge(event.resultId(), 1, Integer::sum);
                }
                replicaA.close();
                replicaA = null;
            }
        }
        String lastSeen = collect(onA, answered);
        assertTrue(answered.size() < CALLS, "the stream on A was cut before every answer arrived");

        Stream onB = stream(replicaB, "?sessionId=" + sessionId, lastSeen);
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
        Stream onA = stream(replicaA, "", null);
        String sessionId = openSession(onA);

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
        Stream onA = stream(replicaA, "", null);
        String sessionId = openSession(onA);
        Event first = null;
        assertEquals(202, post(replicaB, sessionId, call(1)));
        while (first == null || !first.data().contains("\"result\""))
            first = onA.next();
        stream(replicaA, "?sessionId=" + sessionId, first.id());

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
        Stream onA = stream(replicaA, "", null);
        String sessionId = openSession(onA);
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

    /**
     * The replica holding a legacy client's stream looks the session up once its first event is
     * written, to hold the upstream's GET stream. Here that look-up always fails (an ACL denies the
     * replica HGETALL on session records, as a blinking Redis would for a moment): the failure must
     * not mark the written event undelivered, or the client gets it again.
     */
    @Test
    void sessionLookUpFailsAfterAnEventIsWritten_theEventIsNotDeliveredTwice() throws Exception
    {
        try (RawRedis admin = RawRedis.connect(redis.port()))
        {
            admin.command("ACL", "SETUSER", "blind", "on", ">blind-password", "~*", "&*", "+@all", "-hgetall", "(~vnc_sandboxes +hgetall)");
        }
        RunningGateway blind = gateways.startAnother(config -> config.set("store.redis.username", "blind").set("store.redis.password", "blind-password"));
        Stream onBlind = stream(blind, "", null);
        String sessionId = CLIENT.openSession(onBlind, replicaB);
        for (int i = 1; i <= 3; i++)
            assertEquals(202, post(replicaB, sessionId, call(i)), "call " + i);

        Map<Integer, Integer> answered = new HashMap<>();
        List<Integer> order = new ArrayList<>();
        while (answered.size() < 3)
        {
            Event event = onBlind.next();
            assertNotNull(event.name(), "the stream ended: " + answered);
            int id = event.resultId();
            if (id >= 0)
            {
                answered.merge(id, 1, Integer::sum);
                order.add(id);
            }
        }
        // The initialize answer (id 0) was taken by openSession: seen again here, it came twice.
        assertEquals(List.of(1, 2, 3), order.stream().sorted().toList(), "answers in the order delivered: " + order);
    }
}
