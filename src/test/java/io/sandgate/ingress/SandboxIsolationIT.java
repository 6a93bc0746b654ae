package io.sandgate.ingress;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.sandgate.core.Secret;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.HeaderSandbox;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.SandboxBackend;
import io.sandgate.web.NoScript;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every sandbox its own origin (host mode), and what path mode asks of the browser instead, against
 * a real embedded gateway. Requests are written by hand, so that the {@code Host} is what a browser
 * sends for {@code 37579.sbx.localhost} without any resolver (Chromium resolves {@code *.localhost}
 * to loopback itself; {@code NoVncBrowserIT} shows the same in the browser).
 */
@EachIngressFrontEnd
class SandboxIsolationIT
{
    private static final String SECRET = "isolation-it-secret-0123456789abcdef";
    private static final String SANDBOX_A = "37579";
    private static final String SANDBOX_B = "41000";
    private static final String COOKIES = "7";

    @AutoClose
    private static SandboxBackend a;
    @AutoClose
    private static SandboxBackend b;
    @AutoClose
    private static SandboxBackend aSecondPort;
    @AutoClose
    private static HeaderSandbox cookies;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(SandboxIsolationIT::configure);
    @RegisterExtension
    static final GatewayExtension signed = new GatewayExtension(config -> configure(config.set("ingress.access", "signed")));
    @RegisterExtension
    static final GatewayExtension ports = new GatewayExtension(config -> configure(config)
        .set("ingress.host-pattern", "{port}-{id}.sbx.localhost")
        .set("ingress.sandbox-ports", Integer.toString(aSecondPort.port())));

    private static GatewayConfig configure(GatewayConfig config)
    {
        return config.set("ingress.cookie.secret", SECRET)
            .set("ingress.host-pattern", "{id}.sbx.localhost")
            .set("ingress.static-routes", Map.of(SANDBOX_A, a.hostPort(), SANDBOX_B, b.hostPort(), COOKIES, cookies.hostPort()));
    }

    @BeforeAll
    static void start() throws Exception
    {
        a = SandboxBackend.start("a");
        b = SandboxBackend.start("b");
        aSecondPort = SandboxBackend.start("a-second-port");
        cookies = HeaderSandbox.start(
            "Set-Cookie", "vnc_session_id=EVIL; Path=/",
            "Set-Cookie", "__Host-vnc_session_id=EVIL; Path=/; Secure",
            "Set-Cookie", "lab=1; Domain=sbx.localhost; Path=/lab",
            "Service-Worker-Allowed", "/",
            "Content-Security-Policy", "default-src *");
    }

    @BeforeEach
    void clear()
    {
        a.clearRequests();
        b.clearRequests();
        aSecondPort.clearRequests();
    }

    private static String host(String id, int port)
    {
        return id + ".sbx.localhost:" + port;
    }

    // ----------------------------------------------------------------------------------------
    // Host mode: the host names the sandbox, the whole path is the sandbox's
    // ----------------------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {"/", "/vnc.html?autoconnect=true", "/vnc/41000/echo", "/vnc", "/healthz", "/readyz", "/metrics", "/admin/routes", "/mcp/x/mcp", "/egress/example.com/"})
    void aSandboxsHost_getsEveryPath_eventheGatewaysOwn(String path) throws Exception
    {
        RawHttp.Response response = RawHttp.get(gateway.port(), host(SANDBOX_A, gateway.port()), path);

        assertEquals(200, response.status(), path + ": " + response.body());
        assertEquals("a", response.header("X-Backend"), path);
        assertEquals(List.of(path), a.requests().stream().map(SandboxBackend.Recorded::pathAndQuery).toList());
        assertEquals(0, b.requestCount());
    }

    @Test
    void theSandboxIsToldItsHost_andThatItIsMountedAtTheRoot() throws Exception
    {
        RawHttp.get(gateway.port(), host(SANDBOX_A, gateway.port()), "/echo", "X-Forwarded-Prefix", "/forged", "X-Sandbox-Id", SANDBOX_B);

        SandboxBackend.Recorded seen = a.requests().get(0);
        assertEquals(host(SANDBOX_A, gateway.port()), seen.header("x-forwarded-host"));
        assertNull(seen.header("x-forwarded-prefix"), seen.headers().toString());
        assertNull(seen.header("x-sandbox-id"), seen.headers().toString());
        assertEquals(0, b.requestCount(), "the sandbox header names nothing on a sandbox's host");
    }

    @Test
    void theGatewaysOwnHost_keepsPathMode_andItsServlets() throws Exception
    {
        RawHttp.Response viaPath = RawHttp.get(gateway.port(), "127.0.0.1:" + gateway.port(), "/vnc/" + SANDBOX_B + "/echo");
        RawHttp.Response health = RawHttp.get(gateway.port(), "127.0.0.1:" + gateway.port(), "/healthz");

        assertEquals(200, viaPath.status());
        assertEquals("b", viaPath.header("X-Backend"));
        assertEquals("/echo", b.requests().get(0).pathAndQuery());
        assertEquals(200, health.status());
        assertNull(health.header("X-Backend"), "the gateway answers its own health check");
        assertEquals(0, a.requestCount());
    }

    @ParameterizedTest
    @ValueSource(strings = {"abc.sbx.localhost", "0x7.sbx.localhost"})
    void aHostOfTheShapeWithAMalformedId_reachesNothing(String host) throws Exception
    {
        RawHttp.Response response = RawHttp.get(gateway.port(), host + ":" + gateway.port(), "/healthz");

        assertEquals(400, response.status(), response.body());
        assertEquals(0, a.requestCount() + b.requestCount());
    }

    @Test
    void onItsHost_aSandboxsCookies_loseTheGatewaysNameAndTheirDomain_butKeepTheirPath() throws Exception
    {
        RawHttp.Response response = RawHttp.get(gateway.port(), host(COOKIES, gateway.port()), "/page");

        assertEquals(200, response.status());
        assertEquals(List.of("lab=1; Path=/lab"), response.headers("Set-Cookie").stream().map(c -> String.join("; ", c.split("\\s*;\\s*"))).toList());
        assertEquals("/", response.header("Service-Worker-Allowed"), "the whole host is the sandbox's: any scope on it is its own");
    }

    @Test
    void onItsHost_aSandboxsRedirectToItself_staysOnItsHost() throws Exception
    {
        RawHttp.Response response = RawHttp.get(gateway.port(), host(COOKIES, gateway.port()), "/redirect");

        assertEquals(302, response.status());
        assertEquals("/landing", response.header("Location"));
    }

    // ----------------------------------------------------------------------------------------
    // Host mode, signed: the grant is redeemed on the sandbox's own host
    // ----------------------------------------------------------------------------------------

    @Test
    void signed_theGrantBecomesACookieForThatHostAlone_andLeavesTheUrl() throws Exception
    {
        String grant = Grants.create(new Secret(SECRET), Clock.systemUTC()).issue(SANDBOX_A, "alice", Duration.ofMinutes(5));

        RawHttp.Response redeemed = RawHttp.get(signed.port(), host(SANDBOX_A, signed.port()), "/vnc.html?autoconnect=true&sandgate_grant=" + grant);

        assertEquals(303, redeemed.status(), redeemed.body());
        assertEquals("/vnc.html?autoconnect=true", redeemed.header("Location"));
        String setCookie = redeemed.header("Set-Cookie");
        List<String> attributes = List.of(setCookie.split("\\s*;\\s*"));
        assertTrue(setCookie.startsWith("vnc_session_id="), setCookie);
        assertTrue(attributes.contains("Path=/"), setCookie);
        assertFalse(setCookie.toLowerCase(Locale.ROOT).contains("domain"), setCookie);
        assertEquals(0, a.requestCount(), "the grant never reaches the sandbox");
        String cookie = setCookie.substring(0, setCookie.indexOf(';'));

        RawHttp.Response page = RawHttp.get(signed.port(), host(SANDBOX_A, signed.port()), "/vnc.html?autoconnect=true", "Cookie", cookie + "; theme=dark");
        RawHttp.Response otherHost = RawHttp.get(signed.port(), host(SANDBOX_B, signed.port()), "/", "Cookie", cookie);
        RawHttp.Response viaPath = RawHttp.get(signed.port(), "127.0.0.1:" + signed.port(), "/vnc/" + SANDBOX_A + "/", "Cookie", cookie);

        assertEquals(200, page.status(), page.body());
        assertEquals("theme=dark", a.requests().get(0).header("cookie"), "the gateway's cookie stays with the gateway");
        assertEquals(403, otherHost.status(), "a cookie for one sandbox's host opens no other");
        assertEquals(200, viaPath.status(), "the same signed entry, presented to path mode on the gateway's host");
        assertEquals(0, b.requestCount());
    }

    @Test
    void signed_withoutAGrant_orWithAnotherSandboxsGrant_isForbidden() throws Exception
    {
        String grantForB = Grants.create(new Secret(SECRET), Clock.systemUTC()).issue(SANDBOX_B, "mallory", Duration.ofMinutes(5));

        assertEquals(403, RawHttp.get(signed.port(), host(SANDBOX_A, signed.port()), "/").status());
        assertEquals(403, RawHttp.get(signed.port(), host(SANDBOX_A, signed.port()), "/?sandgate_grant=" + grantForB).status());
        assertEquals(0, a.requestCount() + b.requestCount());
    }

    // ----------------------------------------------------------------------------------------
    // Host mode with {port}: other ports of a sandbox, when allowed
    // ----------------------------------------------------------------------------------------

    @Test
    void aPortInTheHost_reachesThatPortOfTheSandbox_onlyWhenItIsTheRoutesOrAllowed() throws Exception
    {
        int gw = ports.port();

        RawHttp.Response own = RawHttp.get(gw, a.port() + "-" + SANDBOX_A + ".sbx.localhost:" + gw, "/x");
        RawHttp.Response second = RawHttp.get(gw, aSecondPort.port() + "-" + SANDBOX_A + ".sbx.localhost:" + gw, "/y");
        RawHttp.Response closed = RawHttp.get(gw, b.port() + "-" + SANDBOX_A + ".sbx.localhost:" + gw, "/z");

        assertEquals("a", own.header("X-Backend"));
        assertEquals("a-second-port", second.header("X-Backend"));
        assertEquals(403, closed.status(), closed.body());
        assertTrue(closed.body().contains("ingress.sandbox-ports"), closed.body());
        assertEquals(0, b.requestCount(), "a port the gateway does not open is never connected to");
    }

    // ----------------------------------------------------------------------------------------
    // Path mode: the browser is asked to keep each sandbox's pages to its own path
    // ----------------------------------------------------------------------------------------

    @Test
    void pathMode_aSandboxsAnswer_carriesThePolicyConfiningItToItsPath_besideItsOwnPolicy() throws Exception
    {
        String origin = "127.0.0.1:" + gateway.port();

        RawHttp.Response response = RawHttp.get(gateway.port(), origin, "/vnc/" + COOKIES + "/page");

        assertEquals(200, response.status());
        assertEquals(List.of("default-src *", SandboxPolicy.confine("http://" + origin, "/vnc/7/", List.of("/vnc/websockify"))),
            response.headers("Content-Security-Policy"), "the sandbox's own policy can only narrow the gateway's, never replace it");
        assertNull(response.header("Service-Worker-Allowed"), "a worker scoped to /vnc/ would see every sandbox's requests");
    }

    @Test
    void pathMode_anIdlessRequest_isConfinedToTheSandboxItReached() throws Exception
    {
        String origin = "127.0.0.1:" + gateway.port();

        RawHttp.Response response = RawHttp.get(gateway.port(), origin, "/vnc/app/ui.js", "X-Sandbox-Id", COOKIES);

        assertEquals(SandboxPolicy.confine("http://" + origin, "/vnc/7/", List.of("/vnc/websockify")), response.headers("Content-Security-Policy").get(1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"/vnc/app/ui.js", "/vnc/99/", "/vnc/7", "/vnc/7;x/page"})
    void pathMode_whatTheGatewayAnswersItself_loadsNothing_inAnOpaqueOrigin(String path) throws Exception
    {
        RawHttp.Response response = RawHttp.get(gateway.port(), "127.0.0.1:" + gateway.port(), path, "Accept", "text/html");

        assertTrue(response.status() >= 300, path + " " + response.status());
        assertEquals(List.of(NoScript.POLICY), response.headers("Content-Security-Policy"), path);
        assertEquals(List.of("nosniff"), response.headers("X-Content-Type-Options"), path);
    }
}
