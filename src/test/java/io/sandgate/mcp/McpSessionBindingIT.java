package io.sandgate.mcp;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A 2025-era session belongs to the client that made it: its id with another credential opens
 * nothing, a client holds a bounded number of them, and a new stream does not replay what an
 * earlier one was sent. The upstream is the MCP Java SDK's server.
 */
class McpSessionBindingIT
{
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String ALICE = "Bearer alice-token";
    private static final String MALLORY = "Bearer mallory-token";
    private static final McpUpstream upstream = McpUpstream.start();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("log.access", "false")
        .set("mcp.max-sessions-per-client", "2")
        // The test's own loopback is a trusted proxy: a request naming no one else is still its own.
        .set("ingress.trusted-proxies", List.of("127.0.0.1", "::1"))
        .set("mcp.servers", List.of(Map.of("name", "tools", "url", upstream.streamableUrl(), "transport", "streamable"))));

    @AfterAll
    static void stop()
    {
        upstream.close();
    }

    private static HttpResponse<String> post(String session, String credential, String body) throws Exception
    {
        return post(session, credential, null, body);
    }

    /** A POST forwarded for {@code forwardedFor} by the trusted proxy the test is, if not null. */
    private static HttpResponse<String> post(String session, String credential, String forwardedFor, String body) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri("/mcp/tools/mcp")).timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25").POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null)
            request.header("Mcp-Session-Id", session);
        if (credential != null)
            request.header("Authorization", credential);
        if (forwardedFor != null)
            request.header("X-Forwarded-For", forwardedFor);
        return CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private static String initialize(String credential) throws Exception
    {
        return initialize(credential, null);
    }

    private static String initialize(String credential, String forwardedFor) throws Exception
    {
        HttpResponse<String> response = initializing(credential, forwardedFor);
        assertEquals(200, response.statusCode(), response.body());
        String session = response.headers().firstValue("Mcp-Session-Id").orElse(null);
        assertNotNull(session, "initialize gives a session");
        assertEquals(202, post(session, credential, forwardedFor, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}").statusCode());
        return session;
    }

    private static HttpResponse<String> initializing(String credential, String forwardedFor) throws Exception
    {
        return post(null, credential, forwardedFor, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
            + "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"binding\",\"version\":\"1\"}}}");
    }

    private static void end(String session, String credential) throws Exception
    {
        end(session, credential, null);
    }

    private static void end(String session, String credential, String forwardedFor) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri("/mcp/tools/mcp")).header("Mcp-Session-Id", session).DELETE();
        if (credential != null)
            request.header("Authorization", credential);
        if (forwardedFor != null)
            request.header("X-Forwarded-For", forwardedFor);
        assertEquals(204, CLIENT.send(request.build(), HttpResponse.BodyHandlers.ofString()).statusCode());
    }

    private static int ping(String session, String credential) throws Exception
    {
        HttpResponse<String> response = post(session, credential, "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}");
        if (response.statusCode() == 404)
            assertEquals(-32001, JSON.readTree(response.body()).path("error").path("code").asInt(), response.body());
        return response.statusCode();
    }

    @Test
    void sessionId_withAnotherCredentialOrNone_isUnknown() throws Exception
    {
        String session = initialize(ALICE);
        try
        {
            assertEquals(404, ping(session, MALLORY), "another client's credential");
            assertEquals(404, ping(session, null), "no credential at all");
            assertEquals(200, ping(session, ALICE), "the owner's");
        }
        finally
        {
            end(session, ALICE);
        }
    }

    @Test
    void sessionOpenedWithoutCredential_isNotTakenOverWithOne() throws Exception
    {
        String session = initialize(null);
        try
        {
            assertEquals(404, ping(session, MALLORY));
            assertEquals(200, ping(session, null));
        }
        finally
        {
            end(session, null);
        }
    }

    @Test
    void sessionsPerClient_areCapped_andEndedOnesMakeRoom() throws Exception
    {
        List<String> sessions = new ArrayList<>(List.of(initialize(ALICE), initialize(ALICE)));
        try
        {
            HttpResponse<String> refused = post(null, ALICE, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"third\",\"version\":\"1\"}}}");
            assertEquals(429, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("mcp.max-sessions-per-client"), refused.body());
            assertEquals(3, JSON.readTree(refused.body()).path("id").asInt());

            // A credential made up for the occasion opens no more: the gateway does not check
            // credentials, so it counts by address.
            HttpResponse<String> madeUp = post(null, MALLORY, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"fourth\",\"version\":\"1\"}}}");
            assertEquals(429, madeUp.statusCode(), madeUp.body());

            end(sessions.remove(0), ALICE);
            sessions.add(initialize(ALICE));
        }
        finally
        {
            for (String session : sessions)
                end(session, ALICE);
        }
    }

    /**
     * A 2026-07-28 request takes the stateless path, which counts no session. That revision has no
     * initialize, and relayed to a session-era upstream one opened a session there each time: past
     * the client's limit, and with no session of the gateway's to end it. It is answered as a
     * server of that revision answers a method the revision removed.
     */
    @Test
    void statelessInitialize_isMethodNotFound_andOpensNoUpstreamSession() throws Exception
    {
        int opened = upstream.streamableSessions.size();
        // One more than the limit: none is counted, so none may open anything.
        for (int id = 1; id <= 3; id++)
        {
            HttpResponse<String> response = CLIENT.send(HttpRequest.newBuilder(gateway.uri("/mcp/tools/mcp")).timeout(Duration.ofSeconds(10))
                .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
                .header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Method", "initialize")
                .POST(HttpRequest.BodyPublishers.ofString("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"initialize\",\"params\":{"
                    + "\"protocolVersion\":\"2026-07-28\",\"capabilities\":{},\"clientInfo\":{\"name\":\"stateless\",\"version\":\"1\"},"
                    + "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}"))
                .build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(404, response.statusCode(), response.body());
            assertEquals(id, JSON.readTree(response.body()).path("id").asInt(), response.body());
            assertEquals(-32601, JSON.readTree(response.body()).path("error").path("code").asInt(), response.body());
            assertTrue(response.headers().firstValue("Mcp-Session-Id").isEmpty(), "no session for a stateless request");
        }
        assertEquals(opened, upstream.streamableSessions.size(), "sessions the upstream opened");
    }

    /**
     * A host is given a whole IPv6 /64 and can take a new address for each session: every address
     * of one /64 is one client to the cap, while a session made without a credential still belongs
     * to the one address that made it.
     */
    @Test
    void sessionsPerClient_countAnIpv6HostByItsSlash64() throws Exception
    {
        Map<String, String> sessions = new LinkedHashMap<>();
        try
        {
            for (String address : List.of("2001:db8:0:1::1", "2001:db8:0:1::2"))
                sessions.put(initialize(null, address), address);
            HttpResponse<String> refused = initializing(null, "2001:db8:0:1::3");
            assertEquals(429, refused.statusCode(), refused.body());
            // The next /64 is another host.
            sessions.put(initialize(null, "2001:db8:0:2::1"), "2001:db8:0:2::1");

            // Without a credential a session is its owner's address, its full address.
            String first = sessions.keySet().iterator().next();
            assertEquals(404, post(first, null, "2001:db8:0:1::2", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}").statusCode(),
                "a session is its own address's, not its /64's");
            assertEquals(200, post(first, null, "2001:db8:0:1::1", "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\"}").statusCode());
        }
        finally
        {
            for (Map.Entry<String, String> session : sessions.entrySet())
                end(session.getKey(), null, session.getValue());
        }
    }

    /**
     * On HTTP+SSE every answer travels on the stream, through the session log: a client that opens
     * the session's stream again without Last-Event-ID gets what comes next, not the log's history.
     */
    @Test
    void newStreamWithoutLastEventId_doesNotReplayEarlierOnes() throws Exception
    {
        String session;
        try (InputStream stream = openStream(gateway.uri("/mcp/tools/sse").toString()))
        {
            BufferedReader reader = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8));
            String endpoint = nextData(reader, "endpoint");
            session = endpoint.substring(endpoint.indexOf("sessionId=") + "sessionId=".length());
            message(session, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
                + "\"protocolVersion\":\"2024-11-05\",\"capabilities\":{},\"clientInfo\":{\"name\":\"replay\",\"version\":\"1\"}}}");
            assertTrue(nextData(reader, "message").contains("\"id\":1"));
        }
        try (InputStream stream = openStream(gateway.uri("/mcp/tools/sse?sessionId=" + session).toString()))
        {
            BufferedReader reader = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8));
            nextData(reader, "endpoint");
            message(session, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
            String first = nextData(reader, "message");
            assertTrue(first.contains("\"id\":2"), "the new stream starts with what came after it opened, not a replay: " + first);
        }
        end(session, null);
    }

    private static InputStream openStream(String uri) throws Exception
    {
        HttpResponse<InputStream> response = CLIENT.send(HttpRequest.newBuilder(URI.create(uri)).header("Accept", "text/event-stream").GET().build(),
            HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, response.statusCode());
        return response.body();
    }

    private static void message(String session, String body) throws Exception
    {
        HttpResponse<String> response = CLIENT.send(HttpRequest.newBuilder(gateway.uri("/mcp/tools/message?sessionId=" + session))
            .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(202, response.statusCode(), response.body());
    }

    /** The data of the next event of the name given. */
    private static String nextData(BufferedReader reader, String name) throws Exception
    {
        boolean named = false;
        for (String line; (line = reader.readLine()) != null; )
        {
            if (line.startsWith("event:"))
                named = line.substring("event:".length()).trim().equals(name);
            else if (line.startsWith("data:") && named)
                return line.substring("data:".length()).trim();
        }
        throw new AssertionError("the stream ended");
    }
}
