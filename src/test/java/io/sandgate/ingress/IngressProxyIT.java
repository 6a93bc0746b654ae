package io.sandgate.ingress;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import io.sandgate.core.Secret;
import io.sandgate.testing.BrowserRequests;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LogCapture;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.SandboxBackend;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.sandgate.testing.BrowserRequests.get;
import static io.sandgate.testing.BrowserRequests.sessionCookie;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ingress face end to end: a real embedded gateway on port 0 in front of real in-process
 * sandbox backends, driven by the JDK's HTTP client (and raw sockets where a client would
 * normalise the request away).
 */
@EachIngressFrontEnd
class IngressProxyIT
{
    private static final String SECRET = "it-secret-0123456789abcdef-0123456789";

    @AutoClose
    private static SandboxBackend sandbox37579;
    @AutoClose
    private static SandboxBackend sandbox41000;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("ingress.cookie.secret", SECRET)
        .set("ingress.static-routes", Map.of(
            "37579", sandbox37579.hostPort(),
            "41000", sandbox41000.hostPort(),
            "500", "127.0.0.1:1")));

    @BeforeAll
    static void start()
    {
        sandbox37579 = SandboxBackend.start("s37579");
        sandbox41000 = SandboxBackend.start("s41000");
    }

    @BeforeEach
    void clear()
    {
        sandbox37579.clearRequests();
        sandbox41000.clearRequests();
    }

    @Test
    void pathRequest_isForwardedWithPrefixStripped_andSetsTheSessionCookie() throws Exception
    {
        HttpResponse<String> response = get(gateway.uri(), "/vnc/37579/echo?x=1");

        assertEquals(200, response.statusCode());
        assertTrue(response.body().startsWith("backend=s37579"), response.body());
        assertTrue(response.body().contains("path=/echo?x=1"), response.body());
        String setCookie = response.headers().allValues("Set-Cookie").stream().filter(c -> c.startsWith("vnc_session_id="))
            .findFirst().orElseThrow();
        assertTrue(setCookie.contains("; Path=/vnc/"), setCookie);
        assertTrue(setCookie.contains("; HttpOnly"), setCookie);
        assertTrue(setCookie.contains("; SameSite=Lax"), setCookie);
        assertFalse(setCookie.contains("Secure"), "plain HTTP from an untrusted peer gets no Secure: " + setCookie);
        SandboxBackend.Recorded seen = sandbox37579.requests().get(0);
        assertEquals("127.0.0.1", seen.header("x-forwarded-for"));
        assertEquals("/vnc/37579", seen.header("x-forwarded-prefix"));
        assertEquals("http", seen.header("x-forwarded-proto"));
    }

    @Test
    void sandboxsDate_replacesTheGatewaysOwn() throws Exception
    {
        HttpResponse<String> response = get(gateway.uri(), "/vnc/37579/echo");

        assertEquals(200, response.statusCode());
        assertEquals(1, response.headers().allValues("Date").size(), () -> response.headers().map().toString());
    }

    @Test
    void idWithoutTrailingSlash_isRedirectedPermanentlyKeepingTheQuery() throws Exception
    {
        HttpResponse<String> response = get(gateway.uri(), "/vnc/37579?autoconnect=1");

        assertEquals(308, response.statusCode());
        assertEquals("/vnc/37579/?autoconnect=1", response.headers().firstValue("Location").orElseThrow());
        assertEquals(0, sandbox37579.requestCount());
    }

    @Test
    void assetStorm_everyIdlessAssetReachesTheCookiesSandbox_andNeverTheOther() throws Exception
    {
        String cookieA = sessionCookie(get(gateway.uri(), "/vnc/37579/"));
        String cookieB = sessionCookie(get(gateway.uri(), "/vnc/41000/"));
        sandbox37579.clearRequests();
        sandbox41000.clearRequests();

        List<CompletableFuture<HttpResponse<String>>> storm = new ArrayList<>();
        for (int i = 0; i < 30; i++)
        {
            for (String cookie : List.of(cookieA, cookieB))
            {
                HttpRequest request = HttpRequest.newBuilder(gateway.uri().resolve("/vnc/app/asset-" + i + ".js"))
                    .header("Cookie", cookie).build();
                storm.add(BrowserRequests.CLIENT.sendAsync(request, HttpResponse.BodyHandlers.ofString()));
            }
        }
        for (int i = 0; i < storm.size(); i++)
        {
            HttpResponse<String> response = storm.get(i).get();
            String expected = i % 2 == 0 ? "backend=s37579" : "backend=s41000";
            assertEquals(200, response.statusCode(), response.body());
            assertEquals(expected + " path=/app/asset-" + (i / 2) + ".js", response.body());
        }
        assertEquals(30, sandbox37579.requestCount());
        assertEquals(30, sandbox41000.requestCount());
    }

    @Test
    void refererOfTheSameOrigin_resolvesAnIdlessRequest_andAForeignOneDoesNot() throws Exception
    {
        String origin = "http://127.0.0.1:" + gateway.port();
        HttpResponse<String> same = get(gateway.uri(), "/vnc/app/ui.js", "Referer", origin + "/vnc/41000/vnc.html");
        assertEquals("backend=s41000 path=/app/ui.js", same.body());

        HttpResponse<String> foreign = get(gateway.uri(), "/vnc/app/ui.js", "Referer", "http://evil.example/vnc/41000/vnc.html");
        assertEquals(404, foreign.statusCode());
        assertEquals(1, sandbox41000.requestCount());
    }

    /** The sandbox's request line is laid out in a 2 KB array per thread: a browser's path of any length around it goes through whole. */
    @Test
    void pathsOfEveryLengthAroundTheRequestHeadsArray_reachTheSandboxWhole() throws Exception
    {
        for (int length = 2020; length < 2050; length++)
        {
            String path = "/p" + "a".repeat(length - 2);
            HttpResponse<String> response = get(gateway.uri(), "/vnc/37579" + path);

            assertEquals(200, response.statusCode(), "a path of " + length + " characters");
            assertTrue(response.body().contains("path=" + path), response.body());
        }
    }

    @Test
    void aSecondRefererOrSandboxHeader_doesNotOutvoteTheFirst() throws Exception
    {
        String origin = "http://127.0.0.1:" + gateway.port();
        HttpResponse<String> referers = get(gateway.uri(), "/vnc/app/ui.js", "Referer", origin + "/vnc/41000/vnc.html",
            "Referer", origin + "/vnc/37579/vnc.html");
        HttpResponse<String> headers = get(gateway.uri(), "/vnc/echo", "X-Sandbox-Id", "41000", "X-Sandbox-Id", "37579");

        assertEquals("backend=s41000 path=/app/ui.js", referers.body());
        assertTrue(headers.body().startsWith("backend=s41000"), headers.body());
        assertEquals(0, sandbox37579.requestCount());
    }

    @Test
    void header_isTheLastResort_andIsNotForwarded() throws Exception
    {
        HttpResponse<String> response = get(gateway.uri(), "/vnc/echo", "X-Sandbox-Id", "41000");

        assertTrue(response.body().startsWith("backend=s41000"), response.body());
        assertNull(sandbox41000.requests().get(0).header("x-sandbox-id"));
    }

    @Test
    void gatewayCookieAndForgedForwardingHeaders_neverReachTheSandbox() throws Exception
    {
        String cookie = sessionCookie(get(gateway.uri(), "/vnc/37579/"));
        sandbox37579.clearRequests();

        get(gateway.uri(), "/vnc/echo", "Cookie", "app=1; " + cookie + "; other=2", "X-Forwarded-For", "6.6.6.6",
            "X-Forwarded-Proto", "https", "X-Forwarded-Host", "evil.example");

        SandboxBackend.Recorded seen = sandbox37579.requests().get(0);
        assertEquals("app=1; other=2", seen.header("cookie"));
        assertEquals("127.0.0.1", seen.header("x-forwarded-for"));
        assertEquals("http", seen.header("x-forwarded-proto"));
        assertEquals("127.0.0.1:" + gateway.port(), seen.header("x-forwarded-host"));
    }

    @Test
    void sseStream_arrivesEventByEvent() throws Exception
    {
        HttpRequest request = HttpRequest.newBuilder(gateway.uri().resolve("/vnc/37579/sse")).build();
        HttpResponse<InputStream> response = BrowserRequests.CLIENT.send(request, HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, response.statusCode());
        try (BufferedReader lines = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8)))
        {
            // The backend holds the second event until released: reading the first one proves the
            // gateway flushed it instead of aggregating.
            assertEquals("data: one", lines.readLine());
            sandbox37579.releaseSecondEvent();
            assertEquals("", lines.readLine());
            assertEquals("data: two", lines.readLine());
        }
    }

    /** Cookie values that must never route: each is tried alone on an id-less request. */
    static List<String> forgedCookies()
    {
        Signer signer = new Signer(SECRET.getBytes(StandardCharsets.UTF_8));
        IdSyntax ids = SessionFixtures.digitIds();
        Clock now = Clock.systemUTC();
        String valid = new SessionCookie(signer, ids, Duration.ofHours(1), 8, now).withFirst(SessionCookie.Decoded.NONE, "37579");
        String[] parts = valid.split("\\.");
        String otherIdsEntry = new SessionCookie(signer, ids, Duration.ofHours(1), 8, now).withFirst(SessionCookie.Decoded.NONE, "41000");
        Clock past = Clock.fixed(Instant.now().minus(Duration.ofDays(2)), ZoneOffset.UTC);
        String expired = new SessionCookie(signer, ids, Duration.ofHours(1), 8, past).withFirst(SessionCookie.Decoded.NONE, "37579");
        String otherSecret = new SessionCookie(new Signer("another-secret-0123456789abcdef".getBytes(StandardCharsets.UTF_8)), ids,
            Duration.ofHours(1), 8, now).withFirst(SessionCookie.Decoded.NONE, "37579");
        return List.of(
            "37579",
            parts[0] + "." + parts[1] + "." + "AAAAAAAAAAAAAAAAAAAAAA",
            parts[0] + "." + (Long.parseLong(parts[1]) + 3600) + "." + parts[2],
            parts[0] + "." + parts[1] + "." + otherIdsEntry.split("\\.")[2],
            expired,
            otherSecret);
    }

    @Test
    void forgedTamperedOrExpiredCookies_areRefused_andReachNoSandbox() throws Exception
    {
        for (String forged : forgedCookies())
        {
            HttpResponse<String> response = get(gateway.uri(), "/vnc/app/ui.js", "Cookie", "vnc_session_id=" + forged);
            assertEquals(403, response.statusCode(), "cookie " + forged + " -> " + response.body());
            assertTrue(response.body().contains("\"error\":\"forbidden\""), response.body());
        }
        assertEquals(0, sandbox37579.requestCount());
        assertEquals(0, sandbox41000.requestCount());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "/vnc/%2e%2e/%2e%2e/etc/passwd",
        "/vnc/../../etc/passwd",
        "/vnc/%2E%2E/x",
        "/vnc/1234567890123456789012345678901234567890123456789012345678901234567890/",
        "/vnc/%D9%A1%D9%A2%D9%A3/",
        "/vnc/37579%2f..%2f41000/",
        "/vnc/..%2f41000/"
    })
    void malformedIds_areAnswered400_andReachNothing(String path) throws Exception
    {
        String status = rawStatusLine(gateway, path);

        assertTrue(status.startsWith("HTTP/1.1 400"), path + " -> " + status);
        assertEquals(0, sandbox37579.requestCount());
        assertEquals(0, sandbox41000.requestCount());
    }

    /** Sends the request line exactly as given: HTTP clients would normalise these paths away. */
    private static String rawStatusLine(Gateway gw, String path) throws Exception
    {
        try (Socket socket = new Socket("127.0.0.1", gw.port()))
        {
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            return new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1)).readLine();
        }
    }

    /**
     * Requests pipelined on one connection are answered in order, each routed by what it carries
     * itself: the second is read from the connection's buffer after the first answer, and the
     * third, naming no sandbox, does not inherit the sandbox of the request before it.
     */
    @Test
    void pipelinedRequests_areEachRoutedByTheirOwnId_andOneNamingNoneReachesNone() throws Exception
    {
        String answers;
        try (Socket socket = new Socket("127.0.0.1", gateway.port()))
        {
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET /vnc/37579/echo?n=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                + "GET /vnc/41000/echo?n=2 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                + "GET /vnc/app/echo?n=3 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            answers = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }

        List<String> statuses = Pattern.compile("HTTP/1\\.1 (\\d{3}) ").matcher(answers)
            .results().map(m -> m.group(1)).toList();
        assertEquals(List.of("200", "200", "404"), statuses, answers);
        int first = answers.indexOf("backend=s37579\nmethod=GET\npath=/echo?n=1\n");
        int second = answers.indexOf("backend=s41000\nmethod=GET\npath=/echo?n=2\n");
        assertTrue(first > 0 && second > first, answers);
        assertEquals(1, sandbox37579.requestCount());
        assertEquals(1, sandbox41000.requestCount());
    }

    /**
     * A body the gateway answered before reading (a POST to a sandbox it has no route for) and
     * that arrives after the answer is never read as the connection's next request: it names a
     * sandbox the gateway does route, and reaches nothing.
     */
    @Test
    void bodyArrivingAfterAnEarlyAnswer_isNeverReadAsARequest() throws Exception
    {
        String smuggled = "GET /vnc/37579/echo?smuggled=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        try (RawHttp.Kept connection = new RawHttp.Kept(gateway.port(), "127.0.0.1"))
        {
            assertEquals(404, connection.send("POST", "/vnc/999/upload", "Content-Length", Integer.toString(smuggled.length())).status());

            connection.write(smuggled);

            String after = connection.drain();
            assertFalse(after.contains("HTTP/1.1"), after);
        }
        assertEquals(0, sandbox37579.requestCount());
    }

    /**
     * A browser that asks for a large answer and stops reading holds up no other browser's: the
     * answer is relayed only as fast as it is taken, so the threads that relay answers (on the
     * servlets, the client's selectors) are never left waiting to write it. 64 MB is far more than
     * the sockets and buffers on the way hold, so it is stalled well before the other requests go.
     */
    @Test
    void browserThatStopsReadingALargeAnswer_holdsUpNoOtherBrowsersAnswers() throws Exception
    {
        try (Socket stalled = new Socket())
        {
            stalled.setReceiveBufferSize(4096);
            stalled.connect(new InetSocketAddress("127.0.0.1", gateway.port()));
            stalled.getOutputStream().write(("GET /vnc/37579/big?bytes=" + (64 << 20) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
            await().atMost(Duration.ofSeconds(10)).until(() -> sandbox37579.requests().stream().anyMatch(r -> r.pathAndQuery().startsWith("/big")));

            // Many at once, so that the gateway opens sandbox connections on each of its selectors.
            HttpRequest other = HttpRequest.newBuilder(gateway.uri().resolve("/vnc/41000/echo")).timeout(Duration.ofSeconds(10)).build();
            for (int round = 0; round < 3; round++)
            {
                List<CompletableFuture<HttpResponse<String>>> others = new ArrayList<>();
                for (int i = 0; i < 16; i++)
                    others.add(BrowserRequests.CLIENT.sendAsync(other, HttpResponse.BodyHandlers.ofString()));
                for (CompletableFuture<HttpResponse<String>> answer : others)
                    assertEquals(200, answer.get(15, TimeUnit.SECONDS).statusCode());
            }
        }
    }

    @Test
    void hugeHeaders_areRefused_andReachNothing() throws Exception
    {
        try (Socket socket = new Socket("127.0.0.1", gateway.port()))
        {
            socket.setSoTimeout(5000);
            OutputStream out = socket.getOutputStream();
            out.write(("GET /vnc/37579/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + "x".repeat(64 * 1024) + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            String status = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.ISO_8859_1)).readLine();
            assertTrue(status.startsWith("HTTP/1.1 431"), status);
        }
        assertEquals(0, sandbox37579.requestCount());
    }

    @Test
    void unknownSandbox_is404_withAJsonBody_andNoCookie() throws Exception
    {
        HttpResponse<String> response = get(gateway.uri(), "/vnc/999/");

        assertEquals(404, response.statusCode());
        assertEquals("application/json", response.headers().firstValue("Content-Type").orElseThrow());
        assertTrue(response.body().contains("no route for sandbox 999"), response.body());
        assertTrue(response.headers().firstValue("Set-Cookie").isEmpty());
    }

    @Test
    void noSandboxNamed_is404() throws Exception
    {
        assertEquals(404, get(gateway.uri(), "/vnc/app/ui.js").statusCode());
    }

    @Test
    void refusedUpstream_is502_withoutLeakingItsAddress() throws Exception
    {
        HttpResponse<String> response = get(gateway.uri(), "/vnc/500/");

        assertEquals(502, response.statusCode());
        assertFalse(response.body().contains("127.0.0.1:1"), response.body());
        assertTrue(response.body().contains("upstream_unreachable"), response.body());
    }

    @Test
    void silentUpstream_is504() throws Exception
    {
        try (RunningGateway impatient = gateway.startAnother(config -> config.set("ingress.idle-timeout", "300ms")))
        {
            HttpResponse<String> response = get(impatient.uri(), "/vnc/37579/slow?ms=3000");
            assertEquals(504, response.statusCode(), response.body());
        }
    }

    @Test
    void signedAccess_grantBecomesCookie_isStrippedByRedirect_andNothingElseGetsIn() throws Exception
    {
        try (LogCapture accessLog = LogCapture.accessLog();
            RunningGateway signed = gateway.startAnother(config -> config.set("ingress.access", "signed")))
        {
            assertEquals(403, get(signed.uri(), "/vnc/37579/").statusCode());
            assertEquals(403, get(signed.uri(), "/vnc/echo", "X-Sandbox-Id", "37579").statusCode());

            String grant = Grants.create(new Secret(SECRET), Clock.systemUTC()).issue("37579", "alice", Duration.ofMinutes(5));
            HttpResponse<String> wrongId = get(signed.uri(), "/vnc/41000/?sandgate_grant=" + grant);
            assertEquals(403, wrongId.statusCode());

            HttpResponse<String> redeemed = get(signed.uri(), "/vnc/37579/vnc.html?autoconnect=1&sandgate_grant=" + grant);
            assertEquals(303, redeemed.statusCode());
            assertEquals("/vnc/37579/vnc.html?autoconnect=1", redeemed.headers().firstValue("Location").orElseThrow());
            String cookie = sessionCookie(redeemed);
            assertEquals(0, sandbox37579.requestCount(), "the grant URL itself is never forwarded");

            assertEquals(200, get(signed.uri(), "/vnc/37579/vnc.html?autoconnect=1", "Cookie", cookie).statusCode());
            assertEquals(200, get(signed.uri(), "/vnc/app/ui.js", "Cookie", cookie).statusCode());
            assertEquals(403, get(signed.uri(), "/vnc/41000/", "Cookie", cookie).statusCode(), "the cookie holds 37579 only");
            assertEquals(0, sandbox41000.requestCount());

            String cookieValue = cookie.substring(cookie.indexOf('=') + 1);
            List<String> lines = accessLog.lines();
            for (String line : lines)
            {
                assertFalse(line.contains(grant), line);
                assertFalse(line.contains(cookieValue), line);
            }
            assertTrue(lines.size() >= 6, "access log lines written: " + lines.size());
            assertTrue(lines.stream().anyMatch(line -> line.contains("/vnc/37579/vnc.html?autoconnect=1&sandgate_grant=[REDACTED]")),
                "the query is logged, the grant's value redacted: " + lines);
        }
    }

    @Test
    void metrics_countRequestsByFaceAndStatus_andResolutionsBySource() throws Exception
    {
        String cookie = sessionCookie(get(gateway.uri(), "/vnc/37579/"));
        get(gateway.uri(), "/vnc/app/x.js", "Cookie", cookie);
        get(gateway.uri(), "/vnc/404-me/");

        String metrics = get(gateway.uri(), "/metrics").body();
        assertNotNull(metrics);
        assertTrue(Pattern.compile("sandgate_ingress_resolution_total\\{source=\"cookie\"} [1-9]").matcher(metrics).find(), metrics);
        assertTrue(Pattern.compile("sandgate_ingress_resolution_total\\{source=\"path\"} [1-9]").matcher(metrics).find(), metrics);
        assertTrue(metrics.contains("sandgate_requests_total{face=\"ingress\",status=\"200\"}"), metrics);
    }

    @Test
    void healthAndReadiness_answer() throws Exception
    {
        assertEquals("{\"status\":\"alive\"}", get(gateway.uri(), "/healthz").body());
        HttpResponse<String> ready = get(gateway.uri(), "/readyz");
        assertEquals(200, ready.statusCode());
        assertTrue(ready.body().contains("\"status\":\"ready\""), ready.body());
    }
}
