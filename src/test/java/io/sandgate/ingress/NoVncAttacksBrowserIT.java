package io.sandgate.ingress;

import java.util.Set;
import java.util.stream.Collectors;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.RawHttp;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The first round's attacks, played by the same browser: a script on one sandbox's page reading
 * another sandbox or opening its WebSocket with the user's cookie (stopped by the same-origin policy
 * in host mode, by the gateway's policy in path mode), and a sandbox setting the gateway's cookie,
 * which never reaches the cookie jar. The fixture is {@link NoVncBrowsers}'.
 */
@ExtendWith(WorkDirExtension.class)
@EachIngressFrontEnd(split = true)
class NoVncAttacksBrowserIT extends NoVncBrowsers
{
    @Test
    void hostMode_noVnc13_signed_twoSandboxesInTwoTabs_eachOnItsOwnOrigin_andNeitherPageReachesTheOther() throws Exception
    {
        String a = hostOrigin(signed, ID_A);
        String b = hostOrigin(signed, ID_B);

        // Debian's noVNC 1.3 as it ships: no path= parameter, so its WebSocket goes to /websockify on the page's host.
        JsonNode result = check(new Check("novnc13-host")
            .tab(new Tab(a + "/vnc.html?autoconnect=true&sandgate_grant=" + grant(ID_A), RED, "novnc13-host-sandboxA-red.png"))
            .tab(new Tab(b + "/vnc.html?autoconnect=true&sandgate_grant=" + grant(ID_B), BLUE, "novnc13-host-sandboxB-blue.png"))
            .probe(0, "fetch", a + "/vnc.html")
            .probe(0, "fetch", b + "/vnc.html")
            .probe(0, "websocket", ws(b) + "/websockify"));

        assertWebSockets(result.path("tabs").get(0), ws(a) + "/websockify", result);
        assertWebSockets(result.path("tabs").get(1), ws(b) + "/websockify", result);
        JsonNode probes = result.path("probes");
        assertEquals("read", probes.get(0).path("outcome").asText(), () -> "control: the page reads its own sandbox\n" + result.toPrettyString());
        assertEquals("blocked", probes.get(1).path("outcome").asText(), () -> "another sandbox's origin is not readable\n" + result.toPrettyString());
        assertEquals("refused", probes.get(2).path("outcome").asText(), () -> "its WebSocket refuses a foreign origin\n" + result.toPrettyString());
        // Each grant became a cookie for its own host alone: no Domain, so no other sandbox's host ever gets it.
        for (JsonNode cookie : result.path("cookies"))
        {
            assertTrue(Set.of(host(ID_A), host(ID_B)).contains(cookie.path("domain").asText()) || cookie.path("domain").asText().isEmpty(),
                () -> "a cookie beyond the sandbox's own host: " + result.path("cookies").toPrettyString());
        }
        assertEquals(Set.of(host(ID_A), host(ID_B)), cookieDomains(result, "vnc_session_id"));
    }

    /**
     * Finding 1 in path mode: the victim's cookie holds both sandboxes (the owner of B handed over a
     * grant link, or the victim owns both), so nothing on the gateway's side tells A's script from
     * A's noVNC. The policy on A's page keeps its fetches and sockets to {@code /vnc/A/}.
     */
    @Test
    void signedPathMode_aSandboxsPage_cannotFetchOrOpenTheWebSocketOfAnotherSandboxInTheSameCookie() throws Exception
    {
        String origin = "http://127.0.0.1:" + signed.port();

        JsonNode result = check(new Check("novnc17-signed-path")
            .visit(origin + "/vnc/" + ID_B + "/?sandgate_grant=" + grant(ID_B))
            .tab(new Tab(origin + "/vnc/" + ID_A + "/?sandgate_grant=" + grant(ID_A), RED, "novnc17-signed-path-sandboxA-red.png"))
            .probe(0, "fetch", origin + "/vnc/" + ID_A + "/")
            .probe(0, "fetch", origin + "/vnc/" + ID_B + "/")
            .probe(0, "websocket", ws(origin) + "/vnc/" + ID_B + "/websockify"));

        assertWebSockets(result.path("tabs").get(0), ws(origin) + "/vnc/" + ID_A + "/websockify", result);
        JsonNode probes = result.path("probes");
        assertEquals("read", probes.get(0).path("outcome").asText(), () -> "control: the page reads its own sandbox\n" + result.toPrettyString());
        assertEquals(200, probes.get(0).path("status").asInt(), result::toPrettyString);
        for (int i = 1; i <= 2; i++)
        {
            assertEquals("blocked", probes.get(i).path("outcome").asText(), result::toPrettyString);
            JsonNode violations = probes.get(i).path("violations");
            assertTrue(violations.size() > 0 && violations.get(0).path("directive").asText().equals("connect-src"),
                () -> "the browser refused it for the gateway's policy\n" + result.toPrettyString());
        }
        // The cookie in the jar does open sandbox B: only the policy stood between A's script and B.
        String cookie = cookieValue(result, "vnc_session_id", "127.0.0.1");
        assertEquals(200, RawHttp.get(signed.port(), "127.0.0.1:" + signed.port(), "/vnc/" + ID_B + "/", "Cookie", "vnc_session_id=" + cookie).status());
    }

    /** Finding 2 in the browser: what a sandbox's Set-Cookie leaves in the cookie jar, in path mode and host mode. */
    @Test
    void aSandboxsSetCookieForTheGatewaysCookie_neverReachesTheCookieJar() throws Exception
    {
        JsonNode result = check(new Check("set-cookie")
            .visit(gateway.uri() + "/vnc/" + ID_COOKIES + "/page")
            .visit(hostOrigin(gateway, ID_COOKIES) + "/page"));

        for (JsonNode visit : result.path("visits"))
            assertEquals(200, visit.path("status").asInt(), result::toPrettyString);
        JsonNode cookies = result.path("cookies");
        for (JsonNode cookie : cookies)
            assertNotEquals("EVIL", cookie.path("value").asText(), () -> "a sandbox set the gateway's cookie: " + cookies.toPrettyString());
        assertTrue(cookieValue(result, "vnc_session_id", "127.0.0.1").contains("."), () -> "the gateway's own, signed: " + cookies.toPrettyString());
        // The sandbox's own cookie: under its mount in path mode, on its own host (not the parent domain) in host mode.
        assertEquals(Set.of("127.0.0.1 /vnc/" + ID_COOKIES + "/lab", host(ID_COOKIES) + " /lab"),
            cookies.findParents("name").stream().filter(c -> c.path("name").asText().equals("lab"))
                .map(c -> c.path("domain").asText() + " " + c.path("path").asText()).collect(Collectors.toSet()),
            cookies::toPrettyString);
    }
}
