package io.sandgate.ingress;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.sandgate.core.Secret;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.SandboxBackend;
import io.sandgate.web.NoScript;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every response the gateway writes itself on the public listener forbids scripts and framing and
 * puts its document in an opaque origin of its own (issue 52, finding 1): health and readiness,
 * redirects, grant redemptions with their cookie, the gateway's errors and Jetty's own error pages,
 * on both ingress front-ends. Before, {@code /healthz} had no policy: a sandbox's page opened it in a
 * window and ran its script there, outside its own confinement. A sandbox's own pages keep their
 * headers.
 */
@EachIngressFrontEnd
class GatewayPagesIT
{
    private static final String SECRET = "gateway-pages-it-secret-0123456789";

    @AutoClose
    private static SandboxBackend sandbox;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("ingress.host-pattern", "{id}.sbx.localhost")
        .set("ingress.static-routes", Map.of("1", sandbox.hostPort(), "9", "127.0.0.1:1")));
    @RegisterExtension
    static final GatewayExtension signed = new GatewayExtension(config -> config
        .set("ingress.access", "signed")
        .set("ingress.cookie.secret", SECRET)
        .set("ingress.host-pattern", "{id}.sbx.localhost")
        .set("ingress.static-routes", Map.of("1", sandbox.hostPort())));

    @BeforeAll
    static void start()
    {
        sandbox = SandboxBackend.start("one");
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @CsvSource({
        "200, GET,  /healthz",                     // health
        "200, GET,  /readyz",
        "200, GET,  /metrics",                     // no internal port: the other faces are here too
        "308, GET,  /vnc",                         // the gateway's redirects
        "308, GET,  /vnc/1",
        "400, GET,  /vnc/a%20b/",                  // its errors
        "404, GET,  /vnc/77/",
        "404, GET,  /vnc/app/ui.js",
        "502, GET,  /vnc/9/",
        "404, GET,  /admin/routes",                // the admin API, off without a token
        "404, GET,  /nothing/here",                // Jetty's error pages: no servlet there
        "405, POST, /healthz",                     // a servlet's sendError
    })
    void whatTheGatewayAnswersItself_hostsNoScript(int status, String method, String path) throws Exception
    {
        int port = gateway.port();

        RawHttp.Response response = RawHttp.send(port, method, "127.0.0.1:" + port, path, "Accept", "text/html", "Content-Length", "0");

        assertEquals(status, response.status(), path + " " + response.body());
        assertNoScript(response, path);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"/healthz", "/readyz", "/metrics", "/nothing/here"})
    void trace_onTheGatewaysOwnPages_echoesNothing(String path) throws Exception
    {
        int port = gateway.port();

        RawHttp.Response response = RawHttp.send(port, "TRACE", "127.0.0.1:" + port, path,
            "Cookie", "vnc_session_id=a-session-the-page-may-not-read", "Authorization", "Bearer a-credential-never-echoed");

        assertEquals(405, response.status(), path + " " + response.body());
        assertFalse(response.body().contains("a-session-the-page-may-not-read") || response.body().contains("a-credential-never-echoed"),
            response.body());
        assertNoScript(response, path);
    }

    @Test
    void jettysOwnRefusals_ofRequestsItCannotParse_hostNoScript() throws Exception
    {
        int port = gateway.port();

        RawHttp.Response badHeader = RawHttp.get(port, "127.0.0.1:" + port, "/healthz", "Bad Name", "x");
        RawHttp.Response tooLarge = RawHttp.get(port, "127.0.0.1:" + port, "/vnc/1/", "X-Big", "x".repeat(20_000));

        assertEquals(400, badHeader.status(), badHeader.body());
        assertNoScript(badHeader, "a header name with a space");
        assertEquals(431, tooLarge.status(), tooLarge.body());
        assertNoScript(tooLarge, "a head beyond the limit");
    }

    @Test
    void grantRedemptions_andTheirCookies_hostNoScript_inPathModeAndHostMode() throws Exception
    {
        int port = signed.port();
        Grants grants = Grants.create(new Secret(SECRET), Clock.systemUTC());

        RawHttp.Response path = RawHttp.get(port, "127.0.0.1:" + port, "/vnc/1/?sandgate_grant=" + grants.issue("1", "alice", Duration.ofMinutes(1)));
        RawHttp.Response host = RawHttp.get(port, "1.sbx.localhost:" + port, "/?sandgate_grant=" + grants.issue("1", "alice", Duration.ofMinutes(1)));
        RawHttp.Response refused = RawHttp.get(port, "127.0.0.1:" + port, "/vnc/1/", "Accept", "text/html");

        for (RawHttp.Response response : List.of(path, host))
        {
            assertEquals(303, response.status(), response.body());
            assertTrue(response.header("Set-Cookie").startsWith("vnc_session_id="), response.headers().toString());
            assertNoScript(response, "a grant's redirect");
        }
        assertEquals(403, refused.status(), refused.body());
        assertNoScript(refused, "no grant");
    }

    @Test
    void aSandboxsOwnPage_keepsItsOwnHeaders() throws Exception
    {
        int port = gateway.port();

        RawHttp.Response hostMode = RawHttp.get(port, "1.sbx.localhost:" + port, "/healthz");
        RawHttp.Response pathMode = RawHttp.get(port, "127.0.0.1:" + port, "/vnc/1/page");

        assertEquals(200, hostMode.status());
        assertTrue(hostMode.body().contains("backend=one path=/healthz"), "the sandbox's /healthz, not the gateway's: " + hostMode.body());
        assertEquals(List.of(), hostMode.headers("Content-Security-Policy"), "a host-mode page is its own origin's");
        assertEquals(List.of(), hostMode.headers("X-Content-Type-Options"));
        assertEquals(200, pathMode.status());
        assertTrue(pathMode.header("Content-Security-Policy").contains("/vnc/1/"), "path mode's confinement: " + pathMode.headers());
    }

    private static void assertNoScript(RawHttp.Response response, String what)
    {
        assertEquals(List.of(NoScript.POLICY), response.headers("Content-Security-Policy"), what + ": " + response.headers());
        assertEquals("default-src 'none'; frame-ancestors 'none'; sandbox", NoScript.POLICY);
        assertEquals(List.of("nosniff"), response.headers("X-Content-Type-Options"), what + ": " + response.headers());
    }
}
