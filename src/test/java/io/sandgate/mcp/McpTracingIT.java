package io.sandgate.mcp;

import java.util.List;
import java.util.Map;

import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RecordedSpans;
import io.sandgate.testing.RedisServerProcess;
import io.sandgate.testing.RunningGateway;
import io.sandgate.tracing.TraceAttributes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One trace across two replicas sharing a real redis-server: an HTTP+SSE client (a plain HTTP
 * client, as {@link McpResumeIT} drives one) holds its stream on replica A and POSTs to replica B,
 * and the answer to a tool call travels from B through the session log to A. Each replica exports
 * to its own recorder, so the test sees which replica made which span: the delivery span on A is
 * the child of the POST's span on B.
 */
class McpTracingIT
{
    private static RedisServerProcess redis;
    private static McpUpstream upstream;
    private static RecordedSpans spansOnA;
    private static RecordedSpans spansOnB;
    private static RunningGateway replicaA;
    private static RunningGateway replicaB;

    @RegisterExtension
    static final GatewayExtension gateways = GatewayExtension.manual(config -> config
        .redisStore(redis)
        .set("store.redis.poll-interval", "200ms")
        .set("mcp.servers", List.of(Map.of("name", "stream", "url", upstream.streamableUrl(), "transport", "streamable"))));

    @BeforeAll
    static void startReplicas() throws Exception
    {
        redis = RedisServerProcess.start();
        upstream = McpUpstream.start();
        spansOnA = new RecordedSpans();
        spansOnB = new RecordedSpans();
        replicaA = gateways.startAnother(config -> config.tracing(spansOnA.tracing()));
        replicaB = gateways.startAnother(config -> config.tracing(spansOnB.tracing()));
    }

    @AfterAll
    static void stopReplicas() throws Exception
    {
        Fixtures.closeInOrder(replicaA, replicaB, spansOnA, spansOnB, upstream, redis);
    }

    @Test
    void toolCallPostedOnB_isDeliveredOnA_inASpanThatIsThePostsChild() throws Exception
    {
        RawSseClient client = new RawSseClient("stream");
        RawSseClient.Stream onA = client.stream(replicaA, "", null);
        String sessionId = client.openSession(onA, replicaB);
        assertEquals(202, client.post(replicaB, sessionId, RawSseClient.call(7)));
        RawSseClient.Event answer = onA.next();
        assertTrue(answer.data().contains("\"id\":7") && answer.data().contains("echo: m7"), answer.data());

        SpanData post = spansOnB.awaitSpan("the tool call's server span on B",
            span -> span.getKind() == SpanKind.SERVER && "tools/call echo".equals(span.getName()));
        assertEquals("tools/call", post.getAttributes().get(TraceAttributes.MCP_METHOD));
        assertEquals("echo", post.getAttributes().get(TraceAttributes.TOOL_NAME));
        assertEquals("mcp", post.getAttributes().get(TraceAttributes.FACE));
        assertEquals("stream", post.getAttributes().get(TraceAttributes.MCP_SERVER));
        String session = post.getAttributes().get(TraceAttributes.MCP_SESSION);
        assertEquals(sessionId, session);
        assertEquals("7", post.getAttributes().get(TraceAttributes.JSONRPC_ID));

        SpanData delivered = spansOnA.awaitSpan("the answer's delivery on A", span -> RecordedSpans.isChildOf(span, post));
        assertEquals(SpanKind.CONSUMER, delivered.getKind());
        assertEquals(session, delivered.getAttributes().get(TraceAttributes.MCP_SESSION));
        assertTrue(spansOnB.ended().stream().noneMatch(span -> span.getSpanId().equals(delivered.getSpanId())), "delivered on A, not on B");
    }

    @Test
    void hugeToolNameAndId_fromAnAgent_areCutInTheSpan() throws Exception
    {
        RawSseClient client = new RawSseClient("stream");
        RawSseClient.Stream onA = client.stream(replicaA, "", null);
        String sessionId = client.openSession(onA, replicaB);
        String tool = "t".repeat(200_000);
        String id = "\"" + "i".repeat(200_000) + "\"";
        client.post(replicaB, sessionId, "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"method\":\"tools/call\",\"params\":{\"name\":\"" + tool + "\"}}");

        SpanData post = spansOnB.awaitSpan("the huge call's server span on B",
            span -> span.getKind() == SpanKind.SERVER && span.getName().startsWith("tools/call ttt"));
        assertTrue(post.getName().length() <= "tools/call ".length() + TraceAttributes.MAX_NAME_PART + 3, post.getName().length() + " characters");
        assertEquals(TraceAttributes.MAX_VALUE_LENGTH, post.getAttributes().get(TraceAttributes.TOOL_NAME).length());
        assertEquals(TraceAttributes.MAX_VALUE_LENGTH, post.getAttributes().get(TraceAttributes.JSONRPC_ID).length());
    }
}
