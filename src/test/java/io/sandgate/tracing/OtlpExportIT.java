package io.sandgate.tracing;

import java.net.http.HttpResponse;
import java.util.HexFormat;
import java.util.Map;

import io.sandgate.testing.Fixtures;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.OtlpReceiver;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.SandboxBackend;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.sandgate.testing.BrowserRequests.get;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Tracing configured as an operator configures it, {@code tracing.otlp.endpoint}, in front of a
 * real OTLP/HTTP receiver: the gateway's spans arrive as protobuf at {@code /v1/traces}, sent in
 * batches and flushed when the gateway stops.
 */
class OtlpExportIT
{
    private static final String TRACE_ID = "5e1f0c2d3b4a69788796a5b4c3d2e1f0";

    private static OtlpReceiver receiver;
    private static SandboxBackend sandbox;

    @RegisterExtension
    static final GatewayExtension gateways = GatewayExtension.manual(config -> config
        .set("ingress.static-routes", Map.of("7", sandbox.hostPort()))
        .set("tracing.otlp.endpoint", receiver.baseUrl())
        .set("tracing.service-name", "sandgate-otlp-it"));

    @BeforeAll
    static void start()
    {
        receiver = OtlpReceiver.start();
        sandbox = SandboxBackend.start("otlp");
    }

    @AfterAll
    static void stop() throws Exception
    {
        Fixtures.closeInOrder(sandbox, receiver);
    }

    @Test
    void spansReachTheCollector_asOtlpProtobuf_byTheTimeTheGatewayHasStopped() throws Exception
    {
        RunningGateway gateway = gateways.startAnother();
        HttpResponse<String> response = get(gateway.uri(), "/vnc/7/echo", "traceparent", "00-" + TRACE_ID + "-00f067aa0ba902b7-01");
        assertEquals(200, response.statusCode());
        gateway.close();

        assertFalse(receiver.exports().isEmpty(), "nothing exported");
        OtlpReceiver.Export export = receiver.exports().get(0);
        assertEquals("POST", export.method());
        assertEquals("/v1/traces", export.path());
        assertEquals("application/x-protobuf", export.contentType());
        byte[] traceId = HexFormat.of().parseHex(TRACE_ID);
        assertTrue(receiver.exports().stream().anyMatch(e -> contains(e.body(), traceId)), "the trace id's bytes in a body");
        assertTrue(receiver.exports().stream().anyMatch(e -> contains(e.body(), "sandgate-otlp-it".getBytes(java.nio.charset.StandardCharsets.UTF_8))),
            "the service name in a body");
    }

    private static boolean contains(byte[] haystack, byte[] needle)
    {
        outer:
        for (int i = 0; i + needle.length <= haystack.length; i++)
        {
            for (int j = 0; j < needle.length; j++)
            {
                if (haystack[i + j] != needle[j])
                    continue outer;
            }
            return true;
        }
        return false;
    }
}
