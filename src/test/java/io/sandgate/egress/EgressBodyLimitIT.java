package io.sandgate.egress;

import java.io.ByteArrayInputStream;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A route's {@code max_body_size}, through a real node to a real target over plain http (no scan)
 * and https (leak scan): a body above it is refused 413 before any of it reaches the node, whether
 * it declared its length or was streamed without one.
 */
class EgressBodyLimitIT
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final int LIMIT = 1024;

    @AutoClose
    private final TargetServer target = TargetServer.start();
    @AutoClose
    private final ForwardProxy node = ForwardProxy.start("n1");

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    private void configure(GatewayConfig config)
    {
        config.trustStoreOf(target);
        config.set("egress.ssrf.allow", "127.0.0.0/8");
        config.set("egress.routes", List.of(
            Map.of("match", Map.of("domains", List.of("127.0.0.1"), "task_type", "plain"), "upstream", "main", "scheme", "http",
                "scan", "off", "max_body_size", LIMIT),
            Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", "main", "max_body_size", LIMIT)));
        config.set("egress.pools", Map.of("main", Map.of("nodes", List.of(Map.of("id", "n1", "address", node.address())))));
    }

    /** A POST whose body has no declared length: the JDK client sends it chunked. */
    private HttpResponse<String> streamed(String path, int size, String taskType) throws Exception
    {
        byte[] body = "x".repeat(size).getBytes();
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri().resolve(path)).timeout(Duration.ofSeconds(15))
            .POST(HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(body)));
        if (taskType != null)
            request.header(EgressPlanner.TASK_TYPE, taskType);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private String plain()
    {
        return "/egress/127.0.0.1:" + target.httpPort() + "/echo";
    }

    private String https()
    {
        return "/egress/127.0.0.1:" + target.httpsPort() + "/echo";
    }

    @Test
    void streamedBodyOverTheLimit_is413_andNeitherNodeNorTargetSawARequest() throws Exception
    {
        HttpResponse<String> plain = streamed(plain(), 4 * LIMIT, "plain");
        assertEquals(413, plain.statusCode());
        assertTrue(plain.body().contains("max_body_size"), plain.body());
        HttpResponse<String> scanned = streamed(https(), 4 * LIMIT, null);
        assertEquals(413, scanned.statusCode());

        assertEquals(0, target.requestCount(), "the target saw " + target.requests());
    }

    @Test
    void streamedBodyWithinTheLimit_arrivesWhole() throws Exception
    {
        assertEquals(200, streamed(plain(), LIMIT, "plain").statusCode());
        assertEquals(200, streamed(https(), LIMIT, null).statusCode());
        assertEquals(List.of(LIMIT, LIMIT), target.requests().stream().map(r -> r.body().length()).toList());
    }

    @Test
    void declaredBodyOverTheLimit_is413_beforeAnyNodeIsAsked() throws Exception
    {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve(plain()))
            .header(EgressPlanner.TASK_TYPE, "plain")
            .POST(HttpRequest.BodyPublishers.ofString("x".repeat(LIMIT + 1))).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(413, response.statusCode());
        assertEquals(0, node.requests(), "the node was asked");
        assertEquals(0, target.requestCount());
    }
}
