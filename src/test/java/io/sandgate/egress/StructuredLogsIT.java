package io.sandgate.egress;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.config.EgressConfig;
import io.sandgate.config.SandgateConfig;
import io.sandgate.ops.LogFormats;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.SandboxBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.slf4j.LoggerFactory;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code log.format: json} and the audit log against a running gateway: every line written while
 * an ingress request, an admin call, a credential injection and a leak block go through parses as
 * JSON with the request's fields, the audit log tells each event, and none of the secrets in play
 * (the real key from the environment, the admin token, the agent's token, the leaked key) is in
 * any line.
 */
class StructuredLogsIT
{
    private static final String KEY = "sk-" + "proj-" + "L0gK3yL0gK3yL0gK3yL0".repeat(2);
    private static final String AGENT_TOKEN = "sgt_logs_agent_0123456789";
    private static final String ADMIN_TOKEN = "admin-logs-token-0123456789";
    private static final String LEAKED = "sk-" + "proj-" + "Le4kLe4kLe4kLe4kLe4k".repeat(2);
    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    private final LoggerContext context = (LoggerContext)LoggerFactory.getILoggerFactory();
    private final ListAppender<ILoggingEvent> lines = new ListAppender<>();
    private final ListAppender<ILoggingEvent> audit = new ListAppender<>();
    private CredentialRoute route;
    private SandboxBackend sandbox;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(config -> route.configure(config)
        .environment("SANDGATE_SECRET_OPENAI", KEY)
        .environment("SANDGATE_SECRET_AGENT_TOKEN", AGENT_TOKEN)
        .set("egress.secrets.source", "env")
        .set("admin.token", ADMIN_TOKEN)
        .set("log.format", "json"));

    @BeforeEach
    void start() throws Exception
    {
        route = CredentialRoute.start();
        sandbox = SandboxBackend.start("logs");
        lines.start();
        audit.start();
        context.getLogger(Logger.ROOT_LOGGER_NAME).addAppender(lines);
        context.getLogger("sandgate.audit").addAppender(audit);
    }

    @AfterEach
    void stop() throws Exception
    {
        context.getLogger(Logger.ROOT_LOGGER_NAME).detachAppender(lines);
        context.getLogger("sandgate.audit").detachAppender(audit);
        LogFormats.use(SandgateConfig.LogFormat.TEXT);
        sandbox.close();
        route.close();
    }

    @Test
    void jsonFormat_linesCarryTheRequestsFields_auditTellsEachEvent_andNoSecretIsWritten() throws Exception
    {
        assertEquals(200, admin("PUT", "/routes/4242", "{\"target\":\"" + sandbox.hostPort() + "\"}").statusCode());
        HttpResponse<String> page = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/vnc/4242/index.html"))
            .header("traceparent", "00-" + TRACE + "-00f067aa0ba902b7-01").build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, page.statusCode(), page.body());
        HttpResponse<String> injected = route.call(gateway, AGENT_TOKEN);
        assertEquals(200, injected.statusCode(), injected.body());
        HttpResponse<String> leak = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/egress/localhost:" + route.target.httpsPort() + "/echo"))
            .header("Authorization", "Bearer " + AGENT_TOKEN).POST(HttpRequest.BodyPublishers.ofString("{\"note\":\"" + LEAKED + "\"}"))
            .timeout(Duration.ofSeconds(15)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(422, leak.statusCode(), leak.body());

        List<JsonNode> json = awaitAccessLines(4);
        JsonNode ingress = json.stream().filter(line -> line.path("mdc").path("sandbox").asText().equals("4242")).findFirst().orElseThrow(() -> new AssertionError(json));
        assertEquals("INFO", ingress.get("level").asText());
        assertEquals("sandgate.access", ingress.get("loggerName").asText());
        assertTrue(ingress.get("formattedMessage").asText().contains(" GET /vnc/4242/index.html 200 "), ingress.toString());
        assertEquals("ingress", ingress.get("mdc").get("face").asText());
        assertEquals(TRACE, ingress.get("mdc").get("traceId").asText());
        JsonNode fields = pairs(ingress);
        assertEquals("GET", fields.get("method").asText());
        assertEquals("/vnc/4242/index.html", fields.get("path").asText());
        assertEquals(200, fields.get("status").asInt());
        assertEquals("ingress", fields.get("face").asText());
        assertEquals("4242", fields.get("sandbox").asText());
        assertEquals("path", fields.get("via").asText());
        assertTrue(fields.has("client") && fields.has("durationMicros"), fields.toString());
        assertTrue(fields.has("upstreamMicros"), "the sandbox's time: " + fields);
        assertTrue(fields.get("upstreamMicros").asLong() <= fields.get("durationMicros").asLong(), "the sandbox's part of the exchange: " + fields);
        assertTrue(json.stream().anyMatch(line -> line.path("mdc").path("face").asText().equals("egress")), json.toString());

        List<JsonNode> events = auditEvents();
        JsonNode call = event(events, "admin.call");
        assertEquals("PUT", call.get("method").asText());
        assertEquals("/admin/routes/4242", call.get("path").asText());
        assertEquals(200, call.get("status").asInt());
        assertTrue(call.get("caller").asText().startsWith("127."), call.toString());
        assertTrue(call.has("time"), call.toString());
        assertEvent(events, "credential.injected", Map.of("agent", "a", "credential", "openai", "host", "localhost"));
        assertEvent(events, "leak.blocked", Map.of("route", "localhost", "direction", "request"));

        List<String> written = new ArrayList<>();
        for (ILoggingEvent event : List.copyOf(lines.list))
            written.add(new String(LogFormats.json(context).encode(event), UTF_8));
        for (ILoggingEvent event : List.copyOf(audit.list))
            written.add(event.getFormattedMessage());
        for (String line : written)
        {
            for (String secret : List.of(KEY, AGENT_TOKEN, ADMIN_TOKEN, LEAKED))
                assertFalse(line.contains(secret), "a secret in the log: " + line);
        }
    }

    @Test
    void nodeEjectionAndRecovery_areAudited_withPoolNodeAndReason() throws Exception
    {
        EgressConfig.Health health = new EgressConfig.Health(Duration.ofSeconds(3), Duration.ofSeconds(2), 3,
            Duration.ofSeconds(15), Optional.empty(), Duration.ofSeconds(3), 10, Duration.ofMillis(50), Duration.ofMillis(100), 3,
            Duration.ofSeconds(10), List.of(10, 50, 100), Duration.ofSeconds(10), 0.5, 0.8);
        NodeState node = new NodeState("main", new EgressConfig.Node("n7", "h", 1, "eu", 100), health);
        for (int i = 0; i < health.passiveFailures(); i++)
            node.requestResult(false, 0);
        node.tcpProbe(true, Duration.ofSeconds(20).toNanos());

        List<JsonNode> events = auditEvents();
        assertEvent(events, "node.ejected", Map.of("pool", "main", "node", "n7", "reason", "passive"));
        assertEvent(events, "node.recovered", Map.of("pool", "main", "node", "n7", "reason", "passive"));
    }

    /** The audit log's lines so far, each parsed: a line that is not one JSON object fails here. */
    private List<JsonNode> auditEvents() throws Exception
    {
        List<JsonNode> events = new ArrayList<>();
        for (ILoggingEvent event : List.copyOf(audit.list))
            events.add(JSON.readTree(event.getFormattedMessage()));
        return events;
    }

    private HttpResponse<String> admin(String method, String path, String body) throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/admin" + path)).header("Authorization", "Bearer " + ADMIN_TOKEN)
            .method(method, HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The access lines as the appenders now write them, once {@code count} are in (proxied ones end after the answer). */
    private List<JsonNode> awaitAccessLines(int count) throws Exception
    {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (true)
        {
            List<JsonNode> access = new ArrayList<>();
            for (ILoggingEvent event : List.copyOf(lines.list))
            {
                if (event.getLoggerName().equals("sandgate.access"))
                    access.add(JSON.readTree(LogFormats.json(context).encode(event)));
            }
            if (access.size() >= count || System.nanoTime() > deadline)
                return access;
            Thread.sleep(20);
        }
    }

    /** logback writes key-value pairs as a list of one-entry objects; one object is easier to read. */
    private static JsonNode pairs(JsonNode line)
    {
        var out = JSON.createObjectNode();
        line.get("kvpList").forEach(pair -> out.setAll((com.fasterxml.jackson.databind.node.ObjectNode)pair));
        return out;
    }

    private static void assertEvent(List<JsonNode> events, String name, Map<String, String> fields)
    {
        JsonNode event = event(events, name);
        fields.forEach((key, value) -> assertEquals(value, event.path(key).asText(), event.toString()));
    }

    private static JsonNode event(List<JsonNode> events, String name)
    {
        return events.stream().filter(e -> e.get("event").asText().equals(name)).findFirst().orElseThrow(() -> new AssertionError(name + " not in " + events));
    }
}
