package io.sandgate.egress;

import java.net.InetAddress;
import java.net.Socket;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RecordedSpans;
import io.sandgate.testing.TargetServer;
import io.sandgate.tracing.TraceAttributes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Egress with tracing on: an agent call is a server span, each attempt through a node a client span
 * under it, and the target is asked as the child of the attempt that reached it. One node answers
 * every request with a 502 (and is never ejected here), the other carries it; the failing node has
 * nearly all the weight, so the first attempt goes there.
 */
class EgressTracingIT
{
    private static final String TRACE_ID = "0af7651916cd43dd8448eb211c80319c";
    private static final String AGENT_SPAN = "b7ad6b7169203331";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private static TargetServer target;
    private static ForwardProxy failing;
    private static ForwardProxy working;
    private static RecordedSpans spans;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .trustStoreOf(target)
        .set("egress.ssrf.allow", "127.0.0.0/8")
        .set("egress.health.passive-failures", "100")
        .set("egress.retry-backoff", "1ms")
        .set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", "main", "retry", 2)))
        .set("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(
            Map.of("id", "failing", "address", failing.address(), "region", "eu", "weight", 100),
            Map.of("id", "working", "address", working.address(), "region", "eu", "weight", 1)))))
        .tracing(spans.tracing()));

    @BeforeAll
    static void start() throws Exception
    {
        target = TargetServer.start();
        failing = ForwardProxy.start("failing").error5xx(502);
        working = ForwardProxy.start("working");
        spans = new RecordedSpans();
    }

    @AfterAll
    static void stop() throws Exception
    {
        Fixtures.closeInOrder(failing, working, target, spans);
    }

    private static HttpResponse<String> call() throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/egress/127.0.0.1:" + target.httpsPort() + "/echo?q=1"))
            .header("traceparent", "00-" + TRACE_ID + "-" + AGENT_SPAN + "-01").timeout(Duration.ofSeconds(15)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static List<SpanData> attemptsOf(SpanData request)
    {
        return spans.ended().stream().filter(span -> RecordedSpans.isChildOf(span, request)).collect(Collectors.toList());
    }

    @Test
    void retriedCall_isARequestSpanWithTwoAttemptSpans_andTheTargetIsTheSecondAttemptsChild() throws Exception
    {
        // Nearly always the first call; a first attempt that drew the working node is simply not retried.
        SpanData request = null;
        for (int i = 0; i < 10 && request == null; i++)
        {
            spans.clear();
            target.clearRequests();
            HttpResponse<String> response = call();
            assertEquals(200, response.statusCode(), response.body());
            SpanData server = spans.awaitSpan("the egress server span", span -> span.getKind() == SpanKind.SERVER);
            if (attemptsOf(server).size() == 2)
                request = server;
        }
        assertNotNull(request, "no call was retried: " + spans.ended());

        assertEquals(TRACE_ID, request.getTraceId());
        assertEquals(AGENT_SPAN, request.getParentSpanId());
        assertEquals("egress", request.getAttributes().get(TraceAttributes.FACE));
        assertEquals("127.0.0.1", request.getAttributes().get(TraceAttributes.EGRESS_ROUTE));
        assertEquals("main", request.getAttributes().get(TraceAttributes.EGRESS_POOL));
        assertEquals("passed", request.getAttributes().get(TraceAttributes.LEAK_VERDICT));
        assertEquals(200L, request.getAttributes().get(TraceAttributes.HTTP_STATUS));

        List<SpanData> attempts = attemptsOf(request);
        SpanData first = attempts.stream().filter(span -> span.getAttributes().get(TraceAttributes.EGRESS_ATTEMPT) == 1L).findFirst().orElseThrow();
        SpanData second = attempts.stream().filter(span -> span.getAttributes().get(TraceAttributes.EGRESS_ATTEMPT) == 2L).findFirst().orElseThrow();
        for (SpanData attempt : attempts)
        {
            assertEquals(SpanKind.CLIENT, attempt.getKind());
            assertEquals("eu", attempt.getAttributes().get(TraceAttributes.EGRESS_REGION));
        }
        assertEquals("failing", first.getAttributes().get(TraceAttributes.EGRESS_NODE));
        assertEquals(StatusCode.ERROR, first.getStatus().getStatusCode());
        assertEquals("working", second.getAttributes().get(TraceAttributes.EGRESS_NODE));
        assertEquals("ok", second.getAttributes().get(TraceAttributes.EGRESS_OUTCOME));

        List<TargetServer.Recorded> received = target.requests();
        assertEquals(1, received.size(), received.toString());
        assertEquals("00-" + TRACE_ID + "-" + second.getSpanId() + "-01", received.get(0).header("traceparent"));
        assertTrue(request.getEndEpochNanos() >= second.getEndEpochNanos(), "the request span ends after its attempts");
    }

    @Test
    void connect_isAServerSpanInTheAgentsTrace_withItsAttemptsAsChildren_endedWhenTheTunnelOpens() throws Exception
    {
        spans.clear();
        String authority = "127.0.0.1:" + target.httpsPort();
        try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), gateway.port()))
        {
            socket.setSoTimeout(15_000);
            socket.getOutputStream().write(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\ntraceparent: 00-" + TRACE_ID + "-" + AGENT_SPAN
                + "-01\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            String status = new String(socket.getInputStream().readNBytes(12), StandardCharsets.US_ASCII);
            assertEquals("HTTP/1.1 200", status);
        }

        SpanData connect = spans.awaitSpan("the CONNECT's server span", span -> span.getName().equals("CONNECT egress 127.0.0.1"));
        assertEquals(SpanKind.SERVER, connect.getKind());
        assertEquals(TRACE_ID, connect.getTraceId());
        assertEquals(AGENT_SPAN, connect.getParentSpanId());
        assertEquals("egress", connect.getAttributes().get(TraceAttributes.FACE));
        assertEquals("127.0.0.1", connect.getAttributes().get(TraceAttributes.SERVER_ADDRESS));
        assertEquals(200L, connect.getAttributes().get(TraceAttributes.HTTP_STATUS));
        List<SpanData> attempts = attemptsOf(connect);
        assertTrue(!attempts.isEmpty(), "the tunnel's attempts: " + spans.ended());
        SpanData last = attempts.stream().max(java.util.Comparator.comparing(span -> span.getAttributes().get(TraceAttributes.EGRESS_ATTEMPT))).orElseThrow();
        assertEquals("working", last.getAttributes().get(TraceAttributes.EGRESS_NODE));
        assertEquals("ok", last.getAttributes().get(TraceAttributes.EGRESS_OUTCOME));
    }
}
