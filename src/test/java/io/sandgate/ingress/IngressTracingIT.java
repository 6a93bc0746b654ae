package io.sandgate.ingress;

import java.net.http.HttpResponse;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.sandgate.ingress.websocket.WebSocketBridgeIT;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RecordedSpans;
import io.sandgate.testing.SandboxBackend;
import io.sandgate.testing.WebSocketBackend;
import io.sandgate.tracing.TraceAttributes;
import org.eclipse.jetty.websocket.client.ClientUpgradeRequest;
import org.eclipse.jetty.websocket.client.WebSocketClient;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.sandgate.testing.BrowserRequests.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ingress with tracing on, on both front-ends: a browser request that carries a W3C
 * {@code traceparent} is served in a server span that is the caller's child, and the sandbox is
 * asked as the gateway span's child, over HTTP and in a WebSocket handshake.
 */
@EachIngressFrontEnd
class IngressTracingIT
{
    private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String CALLER_SPAN = "00f067aa0ba902b7";
    private static final String TRACEPARENT = "00-" + TRACE_ID + "-" + CALLER_SPAN + "-01";

    private static SandboxBackend sandbox;
    private static WebSocketBackend webSockets;
    private static RecordedSpans spans;
    private static WebSocketClient client;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("ingress.static-routes", Map.of("4242", sandbox.hostPort(), "4343", webSockets.hostPort()))
        .tracing(spans.tracing()));

    @BeforeAll
    static void start() throws Exception
    {
        sandbox = SandboxBackend.start("traced");
        webSockets = WebSocketBackend.start("traced-ws");
        spans = new RecordedSpans();
        client = new WebSocketClient();
        client.start();
    }

    @AfterAll
    static void stop() throws Exception
    {
        if (client != null)
            client.stop();
        Fixtures.closeInOrder(sandbox, webSockets, spans);
    }

    @BeforeEach
    void clear()
    {
        sandbox.clearRequests();
        spans.clear();
    }

    @Test
    void requestWithTraceparent_isServedInAChildSpan_andTheSandboxIsAskedAsTheGatewaySpansChild() throws Exception
    {
        HttpResponse<String> response = get(gateway.uri(), "/vnc/4242/echo?x=1", "traceparent", TRACEPARENT);

        assertEquals(200, response.statusCode());
        SpanData server = spans.awaitSpan("the ingress server span", IngressTracingIT::httpServerSpan);
        assertEquals(TRACE_ID, server.getTraceId());
        assertEquals(CALLER_SPAN, server.getParentSpanId());
        assertTrue(server.getParentSpanContext().isRemote());
        assertEquals("GET /vnc/{id}/*", server.getName());
        assertEquals("ingress", server.getAttributes().get(TraceAttributes.FACE));
        assertEquals("4242", server.getAttributes().get(TraceAttributes.SANDBOX_ID));
        assertEquals("path", server.getAttributes().get(TraceAttributes.ROUTE_SOURCE));
        assertEquals(200L, server.getAttributes().get(TraceAttributes.HTTP_STATUS));
        assertEquals("/vnc/4242/echo", server.getAttributes().get(TraceAttributes.URL_PATH), "the path, never the query");
        assertEquals("00-" + TRACE_ID + "-" + server.getSpanId() + "-01", sandbox.requests().get(0).header("traceparent"));
    }

    @Test
    void requestWithoutTraceparent_startsATrace_whichTheSandboxJoins() throws Exception
    {
        HttpResponse<String> response = get(gateway.uri(), "/vnc/4242/echo");

        assertEquals(200, response.statusCode());
        SpanData server = spans.awaitSpan("the ingress server span", IngressTracingIT::httpServerSpan);
        assertTrue(RecordedSpans.isRoot(server), server.toString());
        // A new trace's flags may say more than "sampled" (W3C level 2's random trace id).
        assertEquals("00-" + server.getTraceId() + "-" + server.getSpanId() + "-" + server.getSpanContext().getTraceFlags().asHex(),
            sandbox.requests().get(0).header("traceparent"));
    }

    /**
     * The HTTP request's server span. The WebSocket test's span may end after the next test has
     * begun (it ends when that session closes), so a test picks its own span by sandbox id.
     */
    private static boolean httpServerSpan(SpanData span)
    {
        return span.getKind() == SpanKind.SERVER && "4242".equals(span.getAttributes().get(TraceAttributes.SANDBOX_ID));
    }

    @Test
    void webSocketHandshake_carriesTheGatewaysSpanToTheSandbox() throws Exception
    {
        ClientUpgradeRequest upgrade = new ClientUpgradeRequest();
        upgrade.setHeader("Origin", "http://127.0.0.1:" + gateway.port());
        upgrade.setHeader("traceparent", TRACEPARENT);
        WebSocketBridgeIT.Browser browser = new WebSocketBridgeIT.Browser();
        client.connect(browser, gateway.wsUri("/vnc/4343/ws"), upgrade).get(5, TimeUnit.SECONDS);
        try
        {
            String forwarded = webSockets.lastTraceparent.get();
            assertNotNull(forwarded);
            String[] parts = forwarded.split("-");
            assertEquals(TRACE_ID, parts[1], forwarded);
            assertNotEquals(CALLER_SPAN, parts[2], "the sandbox's parent is the gateway's span, not the browser's");
        }
        finally
        {
            browser.session.close();
        }
    }
}
