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
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LoopbackServers;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code subscriptions/listen} (2026-07-28) on a federation of two 2026-07-28 members: the client
 * gets one acknowledgement, then its members' notifications tagged with its subscription id, and
 * nothing it did not ask for, even from a member that sends everything (a hostile one: it
 * acknowledges what it was not asked, pushes list changes of every type, updates of resources
 * nobody named, and a request of its own onto the stream). A federation's 2026-07-28 clients get
 * {@code resources/subscribe} answered as that revision's servers do: not found.
 */
class McpFederationListenIT
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final String SUBSCRIPTION_ID = "io.modelcontextprotocol/subscriptionId";
    private static final String META = "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\",\"io.modelcontextprotocol/clientCapabilities\":{}}";

    private static final ListeningMember noisy = new ListeningMember("noisy", true);
    private static final ListeningMember quiet = new ListeningMember("quiet", false);

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("log.access", "false")
        .set("mcp.max-streams-per-client", "1")
        .set("mcp.keepalive-interval", "1s")
        .set("mcp.servers", List.of(
            Map.of("name", "noisy", "url", noisy.url(), "transport", "stateless"),
            Map.of("name", "quiet", "url", quiet.url(), "transport", "stateless")))
        .set("mcp.federations", List.of(Map.of("name", "both", "servers", List.of("noisy", "quiet")))));

    @AfterAll
    static void stopMembers() throws Exception
    {
        Fixtures.closeInOrder(noisy, quiet);
    }

    @BeforeEach
    void forget()
    {
        noisy.seen.clear();
        quiet.seen.clear();
    }

    @Test
    void aListenGetsOneAcknowledgementThenOnlyWhatItAskedFor_taggedWithItsSubscriptionId() throws Exception
    {
        HttpResponse<String> answered = post("subscriptions/listen", "{\"jsonrpc\":\"2.0\",\"id\":\"sub-7\",\"method\":\"subscriptions/listen\",\"params\":{"
            + META + ",\"notifications\":{\"promptsListChanged\":true,\"resourceSubscriptions\":[\"noisy__file:///a.txt\"]}}}");

        assertEquals(200, answered.statusCode(), answered::body);
        List<JsonNode> frames = frames(answered.body());
        assertEquals("notifications/subscriptions/acknowledged", frames.get(0).path("method").asText(), frames::toString);
        // The noisy member acknowledged tools too, which the client did not ask for.
        assertEquals(JSON.readTree("{\"promptsListChanged\":true,\"resourceSubscriptions\":[\"noisy__file:///a.txt\"]}"),
            frames.get(0).path("params").path("notifications"), frames::toString);
        List<String> methods = frames.stream().map(frame -> frame.path("method").asText()).toList();
        assertEquals(1, methods.stream().filter("notifications/subscriptions/acknowledged"::equals).count(), methods::toString);
        assertEquals(List.of("notifications/subscriptions/acknowledged", "notifications/prompts/list_changed", "notifications/resources/updated", ""), methods);
        assertEquals("noisy__file:///a.txt", frames.get(2).path("params").path("uri").asText(), frames::toString);
        for (JsonNode notification : frames.subList(0, 3))
            assertEquals("sub-7", notification.path("params").path("_meta").path(SUBSCRIPTION_ID).asText(), frames::toString);
        // Both members ended theirs gracefully: so does the federation, once, under the client's id.
        assertEquals("sub-7", frames.get(3).path("id").asText(), frames::toString);
        assertEquals("complete", frames.get(3).path("result").path("resultType").asText(), frames::toString);

        // Each member was asked for its own resources only, without the prefix.
        assertEquals("[\"file:///a.txt\"]", noisy.listened().path("resourceSubscriptions").toString());
        assertEquals("[]", quiet.listened().path("resourceSubscriptions").toString());
    }

    @Test
    void aListenWithoutAFilterIsRefusedBeforeAnyMemberHearsOfIt() throws Exception
    {
        HttpResponse<String> answered = post("subscriptions/listen", "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"subscriptions/listen\",\"params\":{" + META + "}}");

        assertEquals(-32602, JSON.readTree(answered.body()).path("error").path("code").asInt(), answered::body);
        assertTrue(noisy.seen.isEmpty() && quiet.seen.isEmpty(), () -> noisy.seen + " " + quiet.seen);
    }

    @Test
    void resourcesSubscribe_isNotOfThisRevision_404() throws Exception
    {
        for (String method : List.of("resources/subscribe", "resources/unsubscribe"))
        {
            HttpResponse<String> answered = post(method, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"" + method + "\",\"params\":{" + META + ",\"uri\":\"noisy__file:///a.txt\"}}");

            assertEquals(404, answered.statusCode(), answered::body);
            JsonNode error = JSON.readTree(answered.body());
            assertEquals(-32601, error.path("error").path("code").asInt(), answered::body);
            assertEquals(5, error.path("id").asInt(), answered::body);
        }
        assertTrue(noisy.seen.stream().noneMatch(seen -> seen.contains("resources/")), noisy.seen::toString);
    }

    @Test
    void aHeldListenCountsAgainstItsClientsStreams_andGetsKeepalives() throws Exception
    {
        String listen = "{\"jsonrpc\":\"2.0\",\"id\":\"hold-1\",\"method\":\"subscriptions/listen\",\"params\":{" + META + ",\"notifications\":{\"toolsListChanged\":true}}}";
        HttpResponse<InputStream> held = HTTP.send(request("subscriptions/listen", listen), HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, held.statusCode());
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(held.body(), StandardCharsets.UTF_8)))
        {
            List<String> read = new ArrayList<>();
            // Quiet members send nothing after their acknowledgements: the gateway's keepalive keeps the stream alive.
            assertTimeoutPreemptively(Duration.ofSeconds(10), () ->
            {
                for (String line; (line = lines.readLine()) != null && !line.startsWith(": keepalive"); )
                    read.add(line);
            }, () -> "no keepalive after " + read);
            assertTrue(read.stream().anyMatch(line -> line.contains("notifications/subscriptions/acknowledged")), read::toString);

            // mcp.max-streams-per-client is 1 here, and this client holds one.
            HttpResponse<String> second = post("subscriptions/listen", listen.replace("hold-1", "hold-2"));
            assertEquals(429, second.statusCode(), second::body);
        }
        // Its place is given back once it ends.
        await().atMost(Duration.ofSeconds(10)).until(() -> post("subscriptions/listen",
            "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"subscriptions/listen\",\"params\":{" + META + ",\"notifications\":{\"toolsListChanged\":true}}}").statusCode() == 200);
    }

    private static HttpResponse<String> post(String method, String body) throws Exception
    {
        return HTTP.send(request(method, body), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpRequest request(String method, String body)
    {
        return HttpRequest.newBuilder(gateway.uri("/mcp/both/mcp"))
            .header("Content-Type", "application/json").header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2026-07-28").header("Mcp-Method", method)
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.ofString(body)).build();
    }

    private static List<JsonNode> frames(String stream) throws Exception
    {
        List<JsonNode> frames = new ArrayList<>();
        for (String line : stream.split("\n"))
        {
            if (line.startsWith("data:") && !line.substring(5).isBlank())
                frames.add(JSON.readTree(line.substring(5)));
        }
        return frames;
    }

    /**
     * A 2026-07-28 server with a listen stream of its own making. The noisy one acknowledges
     * whatever it likes and sends every notification there is, and a request; the quiet one
     * acknowledges and ends its stream gracefully. Both end theirs with the listen's result.
     */
    private static final class ListeningMember implements AutoCloseable
    {
        private final Server server;
        final Queue<String> seen = new ConcurrentLinkedQueue<>();

        ListeningMember(String name, boolean noisy)
        {
            server = LoopbackServers.serve(name + "-member", new Handler.Abstract.NonBlocking()
            {
                @Override
                public boolean handle(Request request, Response response, Callback callback)
                {
                    Content.Source.asStringAsync(request, StandardCharsets.UTF_8).thenAccept(body ->
                    {
                        seen.add(body);
                        JsonNode message = parse(body);
                        String method = message.path("method").asText();
                        String id = message.path("id").toString();
                        String answer;
                        if ("server/discover".equals(method))
                        {
                            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
                            answer = "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"resultType\":\"complete\",\"supportedVersions\":[\"2026-07-28\"],"
                                + "\"capabilities\":{\"tools\":{\"listChanged\":true},\"prompts\":{\"listChanged\":true},\"resources\":{\"subscribe\":true}}}}";
                        }
                        else if ("subscriptions/listen".equals(method))
                        {
                            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/event-stream");
                            StringBuilder events = new StringBuilder();
                            String tag = ",\"_meta\":{\"" + SUBSCRIPTION_ID + "\":" + id + "}";
                            events.append(event("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/subscriptions/acknowledged\",\"params\":{\"notifications\":"
                                + (noisy ? "{\"toolsListChanged\":true,\"promptsListChanged\":true,\"resourceSubscriptions\":[\"file:///a.txt\"]}" : "{}") + tag + "}}"));
                            if (id.startsWith("\"hold"))
                            {
                                // Acknowledged, then held open with nothing more to say.
                                Content.Sink.write(response, false, events.toString(), Callback.NOOP);
                                return;
                            }
                            if (noisy)
                            {
                                events.append(event("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\",\"params\":{" + tag.substring(1) + "}}"));
                                events.append(event("{\"jsonrpc\":\"2.0\",\"id\":99,\"method\":\"sampling/createMessage\",\"params\":{}}"));
                                events.append(event("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"file:///secret.txt\"" + tag + "}}"));
                                events.append(event("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/prompts/list_changed\",\"params\":{" + tag.substring(1) + "}}"));
                                events.append(event("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/resources/updated\",\"params\":{\"uri\":\"file:///a.txt\"" + tag + "}}"));
                            }
                            events.append(event("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{\"resultType\":\"complete\",\"_meta\":{\"" + SUBSCRIPTION_ID + "\":" + id + "}}}"));
                            answer = events.toString();
                        }
                        else
                        {
                            response.setStatus(404);
                            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/json");
                            answer = "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}";
                        }
                        Content.Sink.write(response, true, answer, callback);
                    });
                    return true;
                }
            });
        }

        String url()
        {
            return URI.create("http://127.0.0.1:" + LoopbackServers.port(server) + "/mcp").toString();
        }

        /** The filter of the last listen this member got. */
        JsonNode listened()
        {
            return seen.stream().map(ListeningMember::parse).filter(message -> "subscriptions/listen".equals(message.path("method").asText()))
                .reduce((first, second) -> second).orElseThrow().path("params").path("notifications");
        }

        private static String event(String data)
        {
            return "event: message\ndata: " + data + "\n\n";
        }

        private static JsonNode parse(String body)
        {
            try
            {
                return JSON.readTree(body);
            }
            catch (java.io.IOException x)
            {
                return JSON.createObjectNode();
            }
        }

        @Override
        public void close() throws Exception
        {
            server.stop();
        }
    }
}
