package io.sandgate.mcp;

import java.io.InputStream;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.AuthorizationServerDouble;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.ReferenceMcpServer;
import io.sandgate.testing.RunningGateway;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * With {@code mcp.auth}, a session belongs to the principal whose token created it (issuer,
 * subject, client): another principal's valid token opens nothing of it, on either of two replicas
 * sharing a real redis-server, on every path (a 2025 Streamable HTTP session, the HTTP+SSE
 * transport, the SSE bridge, the stateless bridge); the owner's next token, a new one, does. Quotas
 * are the principal's, counted across the replicas.
 */
class McpPrincipalBindingIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PUBLIC = "https://gw.example";
    private static final int QUOTA = 3;

    private static RedisServerProcess redis;
    private static McpUpstream upstream;
    private static ReferenceMcpServer reference;
    private static AuthorizationServerDouble as;
    private static RunningGateway replicaA;
    private static RunningGateway replicaB;

    @RegisterExtension
    static final GatewayExtension gateways = GatewayExtension.manual(config -> config
        .redisStore(redis)
        .set("store.redis.poll-interval", "200ms")
        .set("log.access", "false")
        .set("mcp.auth", Map.of("issuers", List.of(as.issuer()), "jwks-url", as.jwksUri(), "resource-url", PUBLIC))
        .set("mcp.servers", List.of(
            Map.of("name", "stream", "url", upstream.streamableUrl(), "transport", "streamable"),
            Map.of("name", "legacy", "url", upstream.sseUrl(), "transport", "sse"),
            Map.of("name", "bridged", "url", upstream.sseUrl(), "transport", "sse"),
            Map.of("name", "modern", "url", reference.url(), "transport", "stateless"),
            Map.of("name", "metered", "url", upstream.streamableUrl(), "transport", "streamable", "quota", Map.of("calls", QUOTA)))));

    @BeforeAll
    static void start() throws Exception
    {
        redis = RedisServerProcess.start();
        upstream = McpUpstream.start();
        reference = ReferenceMcpServer.start();
        as = AuthorizationServerDouble.start();
        replicaA = gateways.startAnother();
        replicaB = gateways.startAnother();
    }

    @AfterAll
    static void stop() throws Exception
    {
        Fixtures.closeInOrder(replicaA, replicaB, upstream, reference, as, redis);
    }

    /** A fresh token of {@code as} for the server, naming the subject and the client given. */
    private static String token(String server, String subject, String clientId)
    {
        return as.token().subject(subject).clientId(clientId).audience(PUBLIC + "/mcp/" + server).sign();
    }

    private static void assertUnknownSession(HttpResponse<String> response) throws Exception
    {
        assertEquals(404, response.statusCode(), response.body());
        assertEquals(JsonRpcErrors.NOT_FOUND_OR_TIMEOUT, JSON.readTree(response.body()).path("error").path("code").asInt(), response.body());
    }

    /**
     * Streamable HTTP sessions: a 2025 one relayed as it is ({@code stream}), one bridged to an
     * HTTP+SSE server ({@code bridged}), one bridged to a 2026-07-28 server ({@code modern}).
     */
    @ParameterizedTest
    @ValueSource(strings = {"stream", "bridged", "modern"})
    void streamableSession_ofOnePrincipal_isUnknownToAnother_onBothReplicas(String server) throws Exception
    {
        BearerClient alice = new BearerClient(server, token(server, "alice", "agent-a"));
        BearerClient bob = alice.with(token(server, "bob", "agent-a"));
        BearerClient aliceThroughAnotherClient = alice.with(token(server, "alice", "agent-b"));
        String session = alice.openSession(replicaA);
        String ping = "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}";
        for (Gateway replica : List.of(replicaA, replicaB))
        {
            assertUnknownSession(bob.post(replica, session, ping));
            assertUnknownSession(aliceThroughAnotherClient.post(replica, session, ping));
            assertEquals(404, bob.getStream(replica, session), "the session's stream");
            assertEquals(404, bob.delete(replica, session), "ending it");
            // Alice's next token is another string with the same issuer, subject and client.
            assertEquals(200, alice.with(token(server, "alice", "agent-a")).ping(replica, session));
        }
        assertEquals(204, alice.delete(replicaB, session));
    }

    @Test
    void sseSession_ofOnePrincipal_isUnknownToAnother_onBothReplicas() throws Exception
    {
        BearerClient alice = new BearerClient("legacy", token("legacy", "alice", "agent-a"));
        BearerClient bob = alice.with(token("legacy", "bob", "agent-a"));
        BearerClient aliceThroughAnotherClient = alice.with(token("legacy", "alice", "agent-b"));
        try (BearerClient.Stream stream = alice.stream(replicaA, ""))
        {
            String session = stream.session();
            assertEquals(202, alice.message(replicaB, session, BearerClient.initialize(0)).statusCode());
            assertTrue(stream.answerTo(0).contains("protocolVersion"));
            for (Gateway replica : List.of(replicaA, replicaB))
            {
                for (BearerClient stranger : List.of(bob, aliceThroughAnotherClient))
                {
                    assertUnknownSession(stranger.message(replica, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
                    HttpResponse<InputStream> resumed = stranger.sse(replica, "?sessionId=" + session);
                    String body = new String(resumed.body().readAllBytes());
                    assertEquals(404, resumed.statusCode(), "resuming the session's stream: " + body);
                }
            }
            BearerClient aliceAgain = alice.with(token("legacy", "alice", "agent-a"));
            assertEquals(202, aliceAgain.message(replicaA, session, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}").statusCode());
            assertEquals(202, aliceAgain.message(replicaB, session, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"ping\"}").statusCode());
            assertTrue(stream.answerTo(7).contains("\"result\""));
            try (BearerClient.Stream resumed = aliceAgain.stream(replicaB, "?sessionId=" + session))
            {
                assertEquals(session, resumed.session(), "the owner resumes the stream");
            }
        }
    }

    /**
     * {@code quota: {calls: 3}} is each principal's: two principals make three calls each, through
     * both replicas, and the fourth is refused on either, whichever of its sessions it comes in.
     */
    @Test
    void quota_isEachPrincipals_countedAcrossReplicas() throws Exception
    {
        int id = 100;
        for (String subject : List.of("alice", "bob"))
        {
            BearerClient client = new BearerClient("metered", token("metered", subject, "agent-a"));
            String session = client.openSession(replicaA);
            for (int call = 1; call <= QUOTA; call++)
            {
                HttpResponse<String> answer = client.post(call % 2 == 0 ? replicaA : replicaB, session, echo(++id, "quota-" + subject + "-" + call));
                assertEquals(200, answer.statusCode(), answer.body());
                assertTrue(answer.body().contains("echo: quota-" + subject + "-" + call), answer.body());
            }
            String second = client.with(token("metered", subject, "agent-a")).openSession(replicaB);
            for (Gateway replica : List.of(replicaA, replicaB))
            {
                for (String inSession : List.of(session, second))
                {
                    HttpResponse<String> over = client.post(replica, inSession, echo(++id, "over-" + subject));
                    assertEquals(429, over.statusCode(), over.body());
                    JsonNode error = JSON.readTree(over.body());
                    assertEquals(id, error.path("id").asInt(), over.body());
                    assertEquals(CallGate.OVER_QUOTA, error.path("error").path("code").asInt(), over.body());
                    long retryAfter = error.path("error").path("data").path("retryAfter").asLong();
                    assertTrue(retryAfter > 0 && retryAfter <= 60, over.body());
                    assertEquals(String.valueOf(retryAfter), over.headers().firstValue("Retry-After").orElse(null));
                }
            }
            assertEquals(204, client.delete(replicaA, session));
            assertEquals(204, client.delete(replicaB, second));
        }
        assertEquals(2 * QUOTA, upstream.callsOf("echo").stream().filter(call -> String.valueOf(call.arguments().get("text")).startsWith("quota-")).count());
        assertEquals(0, upstream.callsOf("echo").stream().filter(call -> String.valueOf(call.arguments().get("text")).startsWith("over-")).count());

        // The same subject through another client is another principal, with a quota of its own.
        BearerClient otherClient = new BearerClient("metered", token("metered", "alice", "agent-b"));
        String session = otherClient.openSession(replicaB);
        HttpResponse<String> answer = otherClient.post(replicaA, session, echo(++id, "quota-alice-agent-b"));
        assertEquals(200, answer.statusCode(), answer.body());
        assertEquals(204, otherClient.delete(replicaA, session));
    }

    private static String echo(int id, String text)
    {
        return "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"" + text + "\"}}}";
    }
}
