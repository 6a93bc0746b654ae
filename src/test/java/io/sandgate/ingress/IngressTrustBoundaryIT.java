package io.sandgate.ingress;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.sandgate.core.Secret;
import io.sandgate.testing.BrowserRequests;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LoopbackServers;
import io.sandgate.testing.SandboxBackend;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.sandgate.testing.BrowserRequests.get;
import static io.sandgate.testing.BrowserRequests.sessionCookie;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The wall between sandboxes, and between sandboxes and the gateway's own pages, in path mode: each
 * test plays an attack the first round let through (a path that names one sandbox to the container
 * and another to the gateway, a sandbox setting the gateway's cookie, a sandbox page framing the
 * admin UI) against a real embedded gateway.
 */
@EachIngressFrontEnd
class IngressTrustBoundaryIT
{
    private static final String SECRET = "trust-it-secret-0123456789abcdef";
    private static final String ADMIN_TOKEN = "trust-it-admin-token";

    /** What the cookie-setting sandbox answers on every path: its own cookies, and attempts on the gateway's. */
    private static final List<String> SANDBOX_SET_COOKIES = List.of(
        "vnc_session_id=EVIL; Path=/vnc/",
        "VNC_SESSION_ID=EVIL; Path=/",
        "__Host-vnc_session_id=EVIL; Path=/; Secure",
        "=vnc_session_id=EVIL; Path=/vnc/",
        "app=1; Path=/; Domain=127.0.0.1; HttpOnly",
        "pref=dark");

    @AutoClose
    private static SandboxBackend sandbox37579;
    @AutoClose
    private static SandboxBackend sandbox41000;
    @AutoClose("stop")
    private static Server cookieSandbox;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(IngressTrustBoundaryIT::configure);
    @RegisterExtension
    static final GatewayExtension signed = new GatewayExtension(config -> configure(config.set("ingress.access", "signed")));

    @BeforeAll
    static void start() throws Exception
    {
        sandbox37579 = SandboxBackend.start("s37579");
        sandbox41000 = SandboxBackend.start("s41000");
        cookieSandbox = LoopbackServers.serve("cookie-sandbox", new SetsCookies());
    }

    private static void configure(GatewayConfig config)
    {
        config.set("ingress.cookie.secret", SECRET)
            .set("admin.token", ADMIN_TOKEN)
            .set("ingress.static-routes", Map.of(
                "37579", sandbox37579.hostPort(),
                "41000", sandbox41000.hostPort(),
                "7", "127.0.0.1:" + LoopbackServers.port(cookieSandbox)));
    }

    @BeforeEach
    void clear()
    {
        sandbox37579.clearRequests();
        sandbox41000.clearRequests();
    }

    // ----------------------------------------------------------------------------------------
    // Finding 7: one path for the container and the gateway
    // ----------------------------------------------------------------------------------------

    @Test
    void dotSegments_reachTheSandboxTheContainerRoutedOn_withTheNormalisedPath() throws Exception
    {
        RawResponse response = raw(gateway, "/vnc/37579/../41000/echo", null);

        assertEquals(200, response.status(), response.text());
        assertTrue(response.text().contains("backend=s41000"), response.text());
        assertTrue(response.text().contains("path=/echo\n"), response.text());
        assertEquals(0, sandbox37579.requestCount(), "the first id in the raw path is not the sandbox");
    }

    @Test
    void signedAccess_dotSegmentsCannotSpendOneSandboxsGrantOnAnother() throws Exception
    {
        String grant = Grants.create(new Secret(SECRET), Clock.systemUTC()).issue("37579", "alice", Duration.ofMinutes(5));
        String cookie = sessionCookie(get(signed.uri(), "/vnc/37579/?sandgate_grant=" + grant));

        RawResponse response = raw(signed, "/vnc/37579/../41000/echo", cookie);

        assertEquals(403, response.status(), response.text());
        assertEquals(0, sandbox37579.requestCount());
        assertEquals(0, sandbox41000.requestCount());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "/vnc/37579/%2e%2e/41000/echo",
        "/vnc/37579/%2E%2E/41000/echo",
        "/vnc/37579/.%2e/41000/echo",
        "/vnc/37579/..;x/41000/echo",
        "/vnc/37579%2f..%2f41000/echo",
        "/vnc/41000%2fecho",
        "/vnc/41000;x/echo",
    })
    void encodedDotsSlashesAndParameters_neverSmuggleAnotherId(String path) throws Exception
    {
        String cookie = sessionCookie(get(gateway.uri(), "/vnc/37579/"));
        sandbox37579.clearRequests();

        RawResponse response = raw(gateway, path, cookie);

        assertEquals(400, response.status(), path + " -> " + response.text());
        assertEquals(0, sandbox37579.requestCount(), path);
        assertEquals(0, sandbox41000.requestCount(), path);
    }

    @Test
    void percentEncodingOfTheForwardedPath_isKept() throws Exception
    {
        RawResponse response = raw(gateway, "/vnc/41000/a%20b/../c%3Bd/echo", null);

        assertEquals(200, response.status(), response.text());
        assertEquals("/c%3Bd/echo", sandbox41000.requests().get(0).pathAndQuery());
    }

    /**
     * The session cookie is a credential for every sandbox it names, and a sandbox holding it
     * could call the gateway as its user: it must not reach the sandbox in any spelling a cookie
     * parser reads, the gateway's own or the sandbox's.
     */
    @ParameterizedTest
    @ValueSource(strings = {"vnc_session_id = %s", "vnc_session_id\t=%s", "vnc_session_id=\"%s\"", "x=1, vnc_session_id=%s"})
    void theSessionCookie_inAnySpellingAParserReads_neverReachesTheSandbox(String spelling) throws Exception
    {
        String cookie = sessionCookie(get(gateway.uri(), "/vnc/37579/"));
        String value = cookie.substring(cookie.indexOf('=') + 1);
        sandbox37579.clearRequests();

        for (String path : List.of("/vnc/37579/echo", "/vnc/echo"))
        {
            RawResponse response = raw(gateway, path, String.format(spelling, value) + "; app=1");
            if (spelling.startsWith("x=1"))
            {
                // Not read as the session cookie either: without it the id-less request has no sandbox.
                assertEquals(path.equals("/vnc/echo") ? 404 : 200, response.status(), path + " -> " + response.text());
                continue;
            }
            assertEquals(200, response.status(), path + " -> " + response.text());
        }
        for (SandboxBackend.Recorded request : sandbox37579.requests())
            assertEquals("app=1", request.header("cookie"), request.pathAndQuery());
    }

    // ----------------------------------------------------------------------------------------
    // Finding 2: a sandbox's Set-Cookie
    // ----------------------------------------------------------------------------------------

    @Test
    void sandboxCookies_neverSetTheGatewaysCookie_andStayUnderTheSandboxsPath() throws Exception
    {
        HttpResponse<String> response = get(gateway.uri(), "/vnc/7/page");

        assertEquals(200, response.statusCode());
        List<String> setCookies = setCookies(response);
        for (String setCookie : setCookies)
            assertFalse(setCookie.contains("EVIL"), "a sandbox's attempt on the gateway's cookie got through: " + setCookies);
        assertEquals(1, setCookies.stream().filter(c -> c.toLowerCase(Locale.ROOT).contains("vnc_session_id")).count(), setCookies.toString());
        assertTrue(setCookies.contains("app=1; HttpOnly; Path=/vnc/7/"), setCookies.toString());
        assertTrue(setCookies.contains("pref=dark; Path=/vnc/7/"), setCookies.toString());
    }

    @Test
    void sandboxCookies_onAnIdlessRequest_stayUnderTheSandboxsPathToo() throws Exception
    {
        String cookie = sessionCookie(get(gateway.uri(), "/vnc/7/"));

        HttpResponse<String> response = get(gateway.uri(), "/vnc/app/ui.js", "Cookie", cookie);

        assertEquals(200, response.statusCode());
        assertEquals(List.of("app=1; HttpOnly; Path=/vnc/7/", "pref=dark; Path=/vnc/7/app"), setCookies(response));
    }

    // ----------------------------------------------------------------------------------------
    // Admin pages are never framed
    // ----------------------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {"/admin/ui/", "/admin/ui/app.js", "/admin/routes", "/admin/nothing-here"})
    void adminAnswers_forbidFraming_withOrWithoutTheToken(String path) throws Exception
    {
        for (HttpResponse<String> response : List.of(get(gateway.uri(), path), get(gateway.uri(), path, "Authorization", "Bearer " + ADMIN_TOKEN)))
        {
            String policy = response.headers().firstValue("Content-Security-Policy").orElse("");
            assertTrue(policy.contains("frame-ancestors 'none'"), path + " " + response.statusCode() + ": " + response.headers().map());
            assertEquals("DENY", response.headers().firstValue("X-Frame-Options").orElse(null), path + " " + response.statusCode());
        }
    }

    // ----------------------------------------------------------------------------------------

    /** The Set-Cookie headers, each with its attributes joined by "; " (the servlet response may write them without the space). */
    private static List<String> setCookies(HttpResponse<?> response)
    {
        List<String> setCookies = new ArrayList<>();
        for (String setCookie : response.headers().allValues("Set-Cookie"))
            setCookies.add(String.join("; ", setCookie.split("\\s*;\\s*")));
        return setCookies;
    }

    private record RawResponse(int status, String text)
    {
    }

    /** Sends the request line exactly as given: HTTP clients would normalise these paths away. */
    private static RawResponse raw(Gateway gw, String path, String cookie) throws Exception
    {
        try (Socket socket = new Socket("127.0.0.1", gw.port()))
        {
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + (cookie == null ? "" : "Cookie: " + cookie + "\r\n")
                + "Connection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            BufferedReader in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            String statusLine = in.readLine();
            StringBuilder text = new StringBuilder(statusLine).append('\n');
            List<String> lines = new ArrayList<>();
            for (String line = in.readLine(); line != null; line = in.readLine())
                lines.add(line);
            text.append(String.join("\n", lines));
            return new RawResponse(Integer.parseInt(statusLine.split(" ")[1]), text.toString());
        }
    }

    /** A sandbox whose every answer tries the cookies in {@link #SANDBOX_SET_COOKIES}. */
    private static final class SetsCookies extends Handler.Abstract
    {
        @Override
        public boolean handle(Request request, Response response, Callback callback)
        {
            for (String setCookie : SANDBOX_SET_COOKIES)
                response.getHeaders().add(HttpHeader.SET_COOKIE, setCookie);
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain");
            Content.Sink.write(response, true, "page " + Request.getPathInContext(request), callback);
            return true;
        }
    }
}
