package io.sandgate.ingress;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.sandgate.config.CookieConfig.SecureMode;
import io.sandgate.ingress.IngressDecision.Forward;
import io.sandgate.ingress.IngressDecision.Redirect;
import io.sandgate.ingress.IngressDecision.Source;
import io.sandgate.ingress.SessionResolverTest.Gateway;
import io.sandgate.ingress.SessionResolverTest.Req;
import io.sandgate.ingress.SessionResolverTest.SetCookie;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Session resolution in host mode: the host names the sandbox and the whole path is its own; path
 * mode carries on, unchanged, for every host that does not match the pattern.
 */
class HostModeResolverTest
{
    private static final String PATTERN = "{id}.sbx.example.com";
    private static final String HOST_7 = "https://7.sbx.example.com";

    private static Gateway open()
    {
        return new Gateway(Map.of("ingress.host-pattern", PATTERN));
    }

    private static Gateway signed()
    {
        return new Gateway(Map.of("ingress.host-pattern", PATTERN, "ingress.access", "signed"));
    }

    private static Req on(String origin, String path)
    {
        Req req = SessionResolverTest.req(path);
        req.origin = origin;
        return req;
    }

    @ParameterizedTest
    @ValueSource(strings = {"/", "/vnc.html", "/websockify", "/vnc/41000/x", "/vnc/app/ui.js", "/healthz", "/admin/ui/"})
    void theHostNamesTheSandbox_andTheWholePathIsForwarded(String path)
    {
        Forward f = open().forward(on(HOST_7, path).query("autoconnect=1"));

        assertEquals(new Forward("7", Source.HOST, path + "?autoconnect=1", null, new SandboxHost("7", 0, HOST_7)), f);
    }

    @Test
    void pathModeSteps_doNotApply_onASandboxHost()
    {
        Gateway gw = open();
        // A Referer, a cookie and the header naming other sandboxes change nothing: the host decides.
        Forward f = gw.forward(on(HOST_7, "/app/ui.js").referer("https://7.sbx.example.com/vnc/2/").cookie(gw.cookieFor("3")).header("4"));

        assertEquals("7", f.sandboxId());
        assertEquals(Source.HOST, f.source());
        assertNull(f.setCookie(), "open host mode needs no cookie: every request names its sandbox");
    }

    @Test
    void otherHosts_keepPathMode()
    {
        Forward f = open().forward(on("https://gw.example", "/vnc/41000/x"));

        assertEquals(new Forward("41000", Source.PATH, "/x", f.setCookie()), f);
        assertFalse(f.hostMode());
    }

    @Test
    void aHostOfTheShapeWithABadId_isRefused()
    {
        assertEquals(400, open().status(on("https://abc.sbx.example.com", "/")));
    }

    @Test
    void signed_aGrantIsRedeemedOnTheSandboxsOwnHost_intoAHostOnlyCookie()
    {
        Gateway gw = signed();
        String grant = gw.grants.issue("7", "alice", Duration.ofMinutes(5));

        Redirect r = gw.redirect(on("http://7.sbx.example.com:8080", "/vnc.html").query("autoconnect=1&sandgate_grant=" + grant));

        assertEquals(303, r.status());
        assertEquals("/vnc.html?autoconnect=1", r.location());
        SetCookie cookie = SetCookie.parse(r.setCookie());
        assertEquals("vnc_session_id", cookie.name);
        assertEquals("/", cookie.attributes.get("path"));
        assertFalse(cookie.attributes.containsKey("domain"), r.setCookie());
        assertTrue(cookie.attributes.containsKey("httponly"), r.setCookie());
        assertEquals("Lax", cookie.attributes.get("samesite"));
        assertEquals(List.of("7"), gw.idsIn(r.setCookie()));
    }

    @Test
    void signed_overHttps_theCookieIsAHostCookie()
    {
        Gateway gw = signed();
        String grant = gw.grants.issue("7", "alice", Duration.ofMinutes(5));

        Redirect r = assertInstanceOf(Redirect.class, gw.resolve(on(HOST_7, "/").query("sandgate_grant=" + grant), true, SecureMode.AUTO));

        SetCookie cookie = SetCookie.parse(r.setCookie());
        assertEquals("__Host-vnc_session_id", cookie.name);
        assertEquals("/", cookie.attributes.get("path"));
        assertTrue(cookie.attributes.containsKey("secure"), r.setCookie());
        assertFalse(cookie.attributes.containsKey("domain"), r.setCookie());
    }

    @Test
    void signed_theCookieHoldsThatOneSandbox_whateverTheBrowserHeldBefore()
    {
        Gateway gw = signed();
        String grant = gw.grants.issue("7", "alice", Duration.ofMinutes(5));

        Redirect r = gw.redirect(on(HOST_7, "/").query("sandgate_grant=" + grant).cookie(gw.cookieFor("8", "9")));

        assertEquals(List.of("7"), gw.idsIn(r.setCookie()));
    }

    @Test
    void signed_withTheCookie_forwards()
    {
        Gateway gw = signed();

        Forward f = gw.forward(on(HOST_7, "/websockify").cookie(gw.cookieFor("7")));

        assertEquals("/websockify", f.upstreamPath());
        assertNull(f.setCookie());
    }

    @Test
    void signed_withoutAGrantOrCookie_orWithAnotherSandboxsCookie_isForbidden()
    {
        Gateway gw = signed();

        assertEquals(403, gw.status(on(HOST_7, "/")));
        assertEquals(403, gw.status(on(HOST_7, "/").cookie(gw.cookieFor("8"))));
        assertEquals(403, gw.status(on(HOST_7, "/").cookie("forged.1.x")));
    }

    @Test
    void signed_aGrantForAnotherSandbox_isForbiddenOnThisHost()
    {
        Gateway gw = signed();
        String grantFor8 = gw.grants.issue("8", "mallory", Duration.ofMinutes(5));

        assertEquals(403, gw.status(on(HOST_7, "/").query("sandgate_grant=" + grantFor8)));
    }

    @Test
    void signed_anExpiredGrant_isForbidden()
    {
        Gateway gw = signed();
        String grant = gw.grants.issue("7", "alice", Duration.ofMinutes(5));
        gw.clock.advance(Duration.ofMinutes(6));

        assertEquals(403, gw.status(on(HOST_7, "/").query("sandgate_grant=" + grant)));
    }
}
