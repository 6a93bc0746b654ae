package io.sandgate.mcp;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import java.util.stream.Stream;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.LocalResources;
import io.sandgate.testing.NodeScript;
import io.sandgate.testing.ReferenceMcpServer;
import org.eclipse.jetty.toolchain.test.MavenPaths;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * What the federation tests send to {@code /mcp/{federation}/mcp}: raw 2025-11-25 JSON-RPC
 * requests, and runs of the TypeScript SDK 2.x client ({@code src/test/mcp-ts/federation-client.mjs}).
 */
final class FederationRequests
{
    static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
        + "\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}";
    static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Path CLIENT = ReferenceMcpServer.PACKAGES_DIR.resolve("federation-client.mjs");
    private static final Duration PROCESS_TIMEOUT = Duration.ofSeconds(45);

    private final Supplier<String> baseUrl;

    /** @param baseUrl the gateway's (or the front's), known once it has started */
    FederationRequests(Supplier<String> baseUrl)
    {
        this.baseUrl = baseUrl;
    }

    String endpoint(String federation)
    {
        return baseUrl.get() + "/mcp/" + federation + "/mcp";
    }

    /** Opens a federated session; its id. */
    String initialize(String federation, String... headers) throws Exception
    {
        HttpResponse<String> opened = post(federation, null, INITIALIZE, headers);
        assertEquals(200, opened.statusCode(), opened::body);
        return opened.headers().firstValue("Mcp-Session-Id").orElseThrow(() -> new AssertionError("no session id: " + opened.body()));
    }

    /** @param headers more headers, as name, value, name, value... */
    HttpResponse<String> post(String federation, String session, String body, String... headers) throws Exception
    {
        return HTTP.send(request(federation, session, body, headers), HttpResponse.BodyHandlers.ofString());
    }

    CompletableFuture<HttpResponse<String>> postAsync(String federation, String session, String body)
    {
        return HTTP.sendAsync(request(federation, session, body), HttpResponse.BodyHandlers.ofString());
    }

    HttpRequest request(String federation, String session, String body, String... headers)
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(endpoint(federation)))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-11-25")
            .timeout(Duration.ofSeconds(30))
            .POST(HttpRequest.BodyPublishers.ofString(body));
        if (session != null)
            request.header("Mcp-Session-Id", session);
        for (int i = 0; i < headers.length; i += 2)
            request.header(headers[i], headers[i + 1]);
        return request.build();
    }

    /** The answer's response: the JSON body, or the event of an event stream that answers a request. */
    static JsonNode message(HttpResponse<String> response) throws Exception
    {
        String type = response.headers().firstValue("Content-Type").orElse("");
        if (!type.startsWith("text/event-stream"))
            return JSON.readTree(response.body());
        for (String line : response.body().split("\n"))
        {
            if (!line.startsWith("data:"))
                continue;
            JsonNode event = JSON.readTree(line.substring(5).strip());
            if (event.has("result") || event.has("error"))
                return event;
        }
        throw new AssertionError("no response in " + response.body());
    }

    /**
     * Runs the TypeScript client against a federation; what it saw.
     *
     * @param calls the tools to call, as JSON: {@code [{"name": ..., "arguments": {...}}]}
     * @param logs how many log messages to wait for
     * @param mode {@code auto} to let the client choose its revision (2026-07-28 when offered); none for a 2025 session
     */
    static JsonNode runClient(String url, String calls, String logs, String... mode) throws Exception
    {
        Path node = LocalResources.executable("node");
        if (node == null)
            fail("node is missing: run ./scripts/test.sh (apt-get install nodejs npm; npm ci --prefix src/test/mcp-ts)");
        Path work = Files.createTempDirectory(MavenPaths.targetTests(), "federation-client-");
        NodeScript.Ended ended = NodeScript.run(node, ReferenceMcpServer.PACKAGES_DIR, CLIENT, work, "federation-client", PROCESS_TIMEOUT,
            Stream.concat(Stream.of(url, calls, logs), Stream.of(mode)).toArray(String[]::new));
        if (ended.exitCode() != 0 || ended.lastLine().isEmpty())
            fail("federation-client.mjs " + url + " failed (exit " + ended.exitCode() + ")\n" + ended.output());
        JsonNode result = JSON.readTree(ended.lastLine());
        assertTrue(result.path("ok").asBoolean(), ended.output());
        return result;
    }

    static List<String> strings(JsonNode array)
    {
        List<String> values = new ArrayList<>();
        array.forEach(v -> values.add(v.asText()));
        return values;
    }
}
