package io.sandgate.egress;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LogCapture;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A query that is no URI's ({@code ?x=%zz}, {@code ?x=%}, {@code ?x=a|b}) passed Jetty's parser and
 * failed later, while the proxy built the URI towards the pinned address: Jetty's HTML 500 page
 * named that address, and for an IP literal the access log wrote 200. Such a request is the agent's
 * to fix: a 400 in the gateway's JSON, before its target is resolved, logged as the 400 it is, in
 * base-URL and forward-proxy mode alike.
 */
class EgressMalformedUrlIT
{
    /** Queries Jetty lets through that no URI holds. */
    private static final List<String> MALFORMED = List.of("x=%zz", "x=%", "x=%4", "a=1&x=%g0", "x=a|b", "x={y}", "x=a\"b");

    private final List<String> resolved = new CopyOnWriteArrayList<>();
    @AutoClose
    private final TargetServer target = TargetServer.start();
    @AutoClose
    private final ForwardProxy node = ForwardProxy.start("n1");

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    private void configure(GatewayConfig config)
    {
        config.trustStoreOf(target)
            .set("egress.ssrf.allow", "127.0.0.0/8")
            .set("egress.forward-proxy-port", "0")
            .set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("localhost", "127.0.0.1")), "upstream", "main")))
            .set("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(Map.of("id", "n1", "address", node.address())))))
            .namesOnLoopback(resolved);
    }

    @Test
    void malformedQuery_toAName_is400InJson_beforeTheNameIsResolved() throws Exception
    {
        for (String query : MALFORMED)
        {
            RawHttp.Response response = RawHttp.get(gateway.port(), "gw", "/egress/localhost:" + target.httpsPort() + "/q?" + query);
            assertRefusedAsMalformed(response, query);
        }
        assertEquals(List.of(), resolved, "a refused request resolves nothing");
        assertNothingSent();
    }

    @Test
    void malformedQuery_toAnIpLiteral_is400_andTheAccessLogSays400() throws Exception
    {
        try (LogCapture access = LogCapture.accessLog())
        {
            for (String query : MALFORMED)
                assertRefusedAsMalformed(RawHttp.get(gateway.port(), "gw", "/egress/127.0.0.1:" + target.httpsPort() + "/q?" + query), query);
            await().until(() -> access.lines().stream().filter(line -> line.contains("/egress/127.0.0.1:")).count() == MALFORMED.size());
            for (String line : access.lines())
                assertTrue(line.contains(" 400 "), "the access log writes the status sent: " + line);
        }
        assertNothingSent();
    }

    @Test
    void malformedQuery_ofAnAbsoluteFormRequest_is400InJson_beforeTheNameIsResolved() throws Exception
    {
        for (String query : MALFORMED)
        {
            String uri = "http://localhost:" + target.httpPort() + "/q?" + query;
            assertRefusedAsMalformed(RawHttp.get(gateway.forwardProxyPort(), "localhost:" + target.httpPort(), uri), query);
        }
        assertEquals(List.of(), resolved);
        assertNothingSent();
    }

    /** Jetty refuses a malformed escape in the path itself, before any face: nothing resolved, no address named. */
    @Test
    void malformedEscapeInThePath_isRefusedBeforeTheEgressFace() throws Exception
    {
        for (String path : List.of("/a%zz/b", "/a%/b", "/a%4"))
        {
            RawHttp.Response base = RawHttp.get(gateway.port(), "gw", "/egress/localhost:" + target.httpsPort() + path);
            assertEquals(400, base.status(), path + ": " + base.body());
            assertFalse(base.body().contains("127.0.0.1"), base.body());
            RawHttp.Response absolute = RawHttp.get(gateway.forwardProxyPort(), "localhost:" + target.httpPort(), "http://localhost:" + target.httpPort() + path);
            assertEquals(400, absolute.status(), path + ": " + absolute.body());
            assertFalse(absolute.body().contains("127.0.0.1"), absolute.body());
        }
        assertEquals(List.of(), resolved);
        assertNothingSent();
    }

    @Test
    void wellFormedEscapes_stillReachTheTarget_asSent() throws Exception
    {
        RawHttp.Response response = RawHttp.get(gateway.port(), "gw", "/egress/localhost:" + target.httpsPort() + "/echo?a=%41&b=%C3%A9&c=%25zz");
        assertEquals(200, response.status(), response.body());
        assertEquals("/echo?a=%41&b=%C3%A9&c=%25zz", target.requests().get(0).pathAndQuery());
    }

    private void assertRefusedAsMalformed(RawHttp.Response response, String query)
    {
        assertEquals(400, response.status(), query + ": " + response.body());
        assertTrue(response.header("content-type").startsWith("application/json"), query + ": " + response.header("content-type"));
        assertTrue(response.body().contains("\"error\":\"bad_request\"") && response.body().contains("malformed path or query"), query + ": " + response.body());
        assertFalse(response.body().contains("127.0.0.1"), "the pinned address is never named: " + response.body());
    }

    private void assertNothingSent()
    {
        assertEquals(0, target.requestCount(), "nothing reached the target");
        assertTrue(node.received().isEmpty(), "no node was asked: " + node.received());
    }
}
