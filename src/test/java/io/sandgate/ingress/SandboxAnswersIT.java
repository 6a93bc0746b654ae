package io.sandgate.ingress;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.Socket;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.sandgate.testing.BrowserRequests;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.ScriptedSandbox;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static io.sandgate.testing.BrowserRequests.get;
import static io.sandgate.testing.BrowserRequests.post;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Answers a well-behaved server rarely gives, as a sandbox on a raw socket writes them byte for
 * byte, through both front-ends: the core one's own connections and the WAR's proxy servlet must
 * tell the browser the same. Interim answers are not the answer, a sandbox that does not speak HTTP
 * or sends a head no browser should get is a 502, nothing a sandbox sends past its answer
 * becomes the next request's, and a kept connection the sandbox closes as it is taken costs the
 * browser no GET, and no POST is sent twice.
 */
@EachIngressFrontEnd
class SandboxAnswersIT
{
    @AutoClose
    private static ScriptedSandbox sandbox;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("ingress.cookie.secret", "it-secret-0123456789abcdef-0123456789")
        .set("ingress.static-routes", Map.of("7", sandbox.hostPort())));

    @BeforeAll
    static void start() throws Exception
    {
        sandbox = ScriptedSandbox.start((request, out) -> ScriptedSandbox.ok(out, "hello"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"102 Processing", "103 Early Hints"})
    void interimAnswers_areNotTheBrowsers(String status) throws Exception
    {
        sandbox.script((request, out) ->
        {
            out.write(("HTTP/1.1 " + status + "\r\nLink: </style.css>; rel=preload\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            return ScriptedSandbox.ok(out, "final");
        });

        HttpResponse<String> response = get(gateway.uri(), "/vnc/7/page");

        assertEquals(200, response.statusCode());
        assertEquals("final", response.body());
        assertTrue(response.headers().firstValue("Link").isEmpty(), "the hint's fields are not the answer's: " + response.headers().map());
    }

    @Test
    void answerEndedByClosing_arrivesWhole_andTheNextRequestGetsANewConnection() throws Exception
    {
        sandbox.script((request, out) ->
        {
            out.write("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end".getBytes(StandardCharsets.US_ASCII));
            return false;
        });

        assertEquals("until the end", get(gateway.uri(), "/vnc/7/a").body());
        sandbox.script((request, out) -> ScriptedSandbox.ok(out, "next"));
        assertEquals("next", get(gateway.uri(), "/vnc/7/b").body());
    }

    /**
     * The body of a plain answer, framed by its length, must reach the browser as it comes, not once
     * it is whole, its end must free the connection for the next request, and an empty body must end
     * at once. (The body is over 8 KB: the WAR's front-end takes a smaller one whole before it
     * answers.)
     */
    @Test
    void plainAnswersBody_reachesTheBrowserAsItComes_andTheConnectionCarriesTheNextAnswer() throws Exception
    {
        CountDownLatch firstPieceRead = new CountDownLatch(1);
        String rest = " piece" + ".".repeat(9_000);
        sandbox.script((request, out) ->
        {
            ScriptedSandbox.raw(out, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + (5 + rest.length()) + "\r\n\r\nfirst");
            try
            {
                if (!firstPieceRead.await(10, TimeUnit.SECONDS))
                    throw new IOException("the first piece never reached the browser");
            }
            catch (InterruptedException x)
            {
                throw new InterruptedIOException();
            }
            return ScriptedSandbox.raw(out, rest);
        });

        HttpResponse<InputStream> streamed = BrowserRequests.CLIENT.send(HttpRequest.newBuilder(gateway.uri().resolve("/vnc/7/stream")).build(),
            HttpResponse.BodyHandlers.ofInputStream());
        try (InputStream body = streamed.body())
        {
            assertEquals("first", new String(body.readNBytes(5), StandardCharsets.US_ASCII));
            firstPieceRead.countDown();
            assertEquals(rest, new String(body.readAllBytes(), StandardCharsets.US_ASCII));
        }
        sandbox.script((request, out) -> ScriptedSandbox.raw(out, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"));
        HttpResponse<String> empty = get(gateway.uri(), "/vnc/7/empty");
        sandbox.script((request, out) -> ScriptedSandbox.ok(out, "next"));
        HttpResponse<String> next = get(gateway.uri(), "/vnc/7/next");

        assertEquals(200, empty.statusCode());
        assertEquals("", empty.body());
        assertEquals("next", next.body());
        List<ScriptedSandbox.Received> received = sandbox.received();
        List<Integer> connections = received.subList(received.size() - 3, received.size()).stream().map(ScriptedSandbox.Received::connection).toList();
        assertEquals(1, connections.stream().distinct().count(), "one connection carried the three answers: " + connections);
    }

    @Test
    void notHttp_is502_andTheConnectionIsNotKept() throws Exception
    {
        sandbox.script((request, out) -> ScriptedSandbox.raw(out, "SSH-2.0-OpenSSH_9.6\r\n\r\n"));

        HttpResponse<String> response = get(gateway.uri(), "/vnc/7/a");

        assertEquals(502, response.statusCode());
        assertTrue(response.body().contains("upstream_failed"), response.body());
        sandbox.script((request, out) -> ScriptedSandbox.ok(out, "fine"));
        assertEquals("fine", get(gateway.uri(), "/vnc/7/b").body());
    }

    @Test
    void bytesAfterAnAnswer_neverBecomeTheNextRequestsAnswer() throws Exception
    {
        // A sandbox that smuggles a second answer behind the first: a kept connection would hand it to
        // whichever request it carries next.
        sandbox.script((request, out) -> ScriptedSandbox.raw(out, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nfirst"
            + "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\npoison"));
        assertEquals("first", get(gateway.uri(), "/vnc/7/a").body());
        sandbox.script((request, out) -> ScriptedSandbox.ok(out, "second"));

        assertEquals("second", get(gateway.uri(), "/vnc/7/b").body());
    }

    /**
     * Heads a hostile sandbox frames two ways at once, or splits with a bare CR, to pass a second
     * answer to the next request on the connection: none is of the plain kind the link reads itself,
     * so Jetty's parser judges each, refuses it, and the connection is not used again.
     */
    @ParameterizedTest
    @ValueSource(strings = {
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nfirst\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 40\r\n\r\nfirst",
        "HTTP/1.1 200 OK\r\nX-Split: a\rContent-Length: 5\r\n\r\nfirst"})
    void answerFramedTwoWays_is502_andWhatFollowsItNeverBecomesTheNextAnswer(String head) throws Exception
    {
        sandbox.script((request, out) -> ScriptedSandbox.raw(out, head + "HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\npoison"));

        HttpResponse<String> response = get(gateway.uri(), "/vnc/7/a");

        assertEquals(502, response.statusCode(), response.body());
        assertTrue(response.headers().firstValue("X-Split").isEmpty());
        sandbox.script((request, out) -> ScriptedSandbox.ok(out, "second"));
        assertEquals("second", get(gateway.uri(), "/vnc/7/b").body());
    }

    @Test
    void hugeHeaderFromTheSandbox_is502_andNothingOfItReachesTheBrowser() throws Exception
    {
        sandbox.script((request, out) -> ScriptedSandbox.raw(out, "HTTP/1.1 200 OK\r\nX-Big: " + "a".repeat(200_000) + "\r\nContent-Length: 2\r\n\r\nok"));

        HttpResponse<String> response = get(gateway.uri(), "/vnc/7/a");

        assertEquals(502, response.statusCode(), response.body());
        assertTrue(response.body().contains("upstream_failed"), response.body());
        assertTrue(response.headers().firstValue("X-Big").isEmpty());
    }

    @Test
    void headJustUnderWhatTheGatewayReads_reachesTheBrowser_withTheGatewaysOwnFields() throws Exception
    {
        // The gateway reads up to 8 KB of a sandbox's head and adds fields of its own (the session
        // cookie, the confinement policy): the server must have room to send both, over 8 KB here.
        String big = "a".repeat(Ingress.MAX_ANSWER_HEAD - 100);
        sandbox.script((request, out) -> ScriptedSandbox.raw(out, "HTTP/1.1 200 OK\r\nX-Big: " + big + "\r\nContent-Length: 2\r\n\r\nok"));

        HttpResponse<String> response = get(gateway.uri(), "/vnc/7/a");

        assertEquals(200, response.statusCode(), response.body());
        assertEquals("ok", response.body());
        assertEquals(big, response.headers().firstValue("X-Big").orElse(null));
        assertTrue(response.headers().firstValue("Set-Cookie").isPresent(), "the gateway's own fields are there too: " + response.headers().map().keySet());
    }

    @Test
    void keptConnectionClosedAsItIsTaken_theGetIsSentAgainOnANewOne() throws Exception
    {
        // Sandboxes close idle connections when they like; one that closes just as the gateway reuses it
        // must not cost the browser its request. Jetty's client in the WAR gets the same answer as the
        // core front-end's own connections.
        sandbox.script((request, out) -> request.number() == 1 ? ScriptedSandbox.ok(out, "first on " + request.connection()) : false);
        // The earlier tests' connections are kept too, and each closes as it is taken now.
        String first = get(gateway.uri(), "/vnc/7/a").body();
        assertTrue(first.startsWith("first on "), first);

        HttpResponse<String> second = get(gateway.uri(), "/vnc/7/b");

        assertEquals(200, second.statusCode(), second.body());
        assertTrue(second.body().startsWith("first on "), second.body());
        assertTrue(!second.body().equals(first), "a new connection answered: " + first + " then " + second.body());
    }

    @ParameterizedTest
    @ValueSource(strings = {"pay once", ""})
    void keptConnectionClosedAsItIsTaken_aPostIsNotSentTwice_withABodyOrWithout(String body) throws Exception
    {
        sandbox.script((request, out) -> ScriptedSandbox.ok(out, "kept"));
        assertEquals("kept", get(gateway.uri(), "/vnc/7/a").body());
        sandbox.script((request, out) -> false);
        int postsBefore = posts();

        HttpResponse<String> response = post(gateway.uri(), "/vnc/7/upload", HttpRequest.BodyPublishers.ofString(body));

        assertEquals(502, response.statusCode(), response.body());
        assertEquals(postsBefore + 1, posts(), "the sandbox saw the POST once");
    }

    /**
     * The attack: a browser's {@code Connection} naming {@code Content-Length}, so that a proxy that
     * drops what Connection names sends the body with no length, and the sandbox reads it as a request
     * of its own. With a partial request as the body, the link went back to its pool with that request
     * open, and the next browser's request was read as its last field: that browser got the answer to
     * the attacker's request, and the attacker's request carried its cookies.
     */
    @Test
    void browsersConnectionNamingContentLength_neitherSmugglesARequest_norPrefixesAnothersRequest() throws Exception
    {
        sandbox.script((request, out) -> ScriptedSandbox.ok(out, request.requestLine() + " cookie=" + request.header("Cookie")));
        int before = sandbox.received().size();
        String partial = "GET /poison HTTP/1.1\r\nX-Absorb: ";
        try (Socket attacker = new Socket("127.0.0.1", gateway.port()))
        {
            attacker.setSoTimeout(10_000);
            attacker.getOutputStream().write(("POST /vnc/7/upload HTTP/1.1\r\nHost: localhost:" + gateway.port() + "\r\n"
                + "Connection: close, Content-Length\r\nContent-Type: text/plain\r\nContent-Length: " + partial.length() + "\r\n\r\n" + partial)
                .getBytes(StandardCharsets.ISO_8859_1));
            String answer = new String(attacker.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
            assertTrue(answer.endsWith("POST /upload HTTP/1.1 cookie=null"), answer);
        }

        RawHttp.Response victim = RawHttp.get(gateway.port(), "localhost:" + gateway.port(), "/vnc/7/victim", "Cookie", "app=victim-secret");

        assertEquals("GET /victim HTTP/1.1 cookie=app=victim-secret", victim.body(), "the victim got the answer to its own request");
        List<ScriptedSandbox.Received> received = sandbox.received().subList(before, sandbox.received().size());
        assertEquals(2, received.size(), received.toString());
        assertEquals(partial, new String(received.get(0).body(), StandardCharsets.ISO_8859_1), "the body went as a body");
        assertEquals(Integer.toString(partial.length()), received.get(0).header("Content-Length"));
    }

    @Test
    void headersTheSandboxsConnectionNames_stopAtTheGateway_butNotItsLength() throws Exception
    {
        sandbox.script((request, out) -> ScriptedSandbox.raw(out,
            "HTTP/1.1 200 OK\r\nConnection: X-Hop, Content-Length\r\nX-Hop: secret-hop\r\nX-Kept: yes\r\nContent-Length: 2\r\n\r\nok"));

        RawHttp.Response response = RawHttp.get(gateway.port(), "localhost:" + gateway.port(), "/vnc/7/a");

        assertEquals("ok", response.body());
        assertNull(response.header("X-Hop"), response.headers().toString());
        assertEquals("yes", response.header("X-Kept"));
    }

    /**
     * Every sandbox shares the gateway's origin in path mode, and its site in host mode: a header
     * whose effect outlasts the answer and covers the origin or site would let one sandbox clear the
     * gateway's session cookie and every other sandbox's storage, report the URLs a user visits on
     * the gateway to a collector of its choosing, or pin the origin to HTTPS or elsewhere.
     */
    @ParameterizedTest
    @ValueSource(strings = {
        "Clear-Site-Data: \"cookies\", \"storage\"",
        "NEL: {\"report_to\":\"spy\",\"max_age\":31536000,\"include_subdomains\":true,\"success_fraction\":1.0}",
        "Report-To: {\"group\":\"spy\",\"max_age\":31536000,\"endpoints\":[{\"url\":\"https://collector.example/r\"}]}",
        "Strict-Transport-Security: max-age=0; includeSubDomains",
        "Alt-Svc: h3=\"elsewhere.example:443\"; ma=2592000",
        "Accept-CH: Sec-CH-UA-Full-Version-List, Sec-CH-UA-Platform-Version",
    })
    void originWideHeaders_fromASandbox_neverReachTheBrowser(String header) throws Exception
    {
        sandbox.script((request, out) -> ScriptedSandbox.raw(out, "HTTP/1.1 200 OK\r\n" + header + "\r\nContent-Length: 2\r\n\r\nok"));

        RawHttp.Response response = RawHttp.get(gateway.port(), "localhost:" + gateway.port(), "/vnc/7/page");

        assertEquals(200, response.status());
        String name = header.substring(0, header.indexOf(':'));
        assertNull(response.header(name), name + " from one sandbox acts beyond it");
    }

    /**
     * Characters browsers send unescaped in a query and Jetty's server takes, though a URI may not
     * hold them: the servlets (building a URI for Jetty's client) answered 500 with a page naming the
     * pod's address, and a WebSocket's handshake failed likewise on both front-ends.
     */
    @ParameterizedTest
    @ValueSource(strings = {"x={}", "q=a|b", "%%%", "x=%u0041", "a[]=1&b=^`"})
    void queryCharactersAUriMayNotHold_reachTheSandbox_asTheBrowserMeantThem(String query) throws Exception
    {
        sandbox.script((request, out) -> ScriptedSandbox.ok(out, request.requestLine()));
        String pod = sandbox.hostPort().substring(sandbox.hostPort().indexOf(':') + 1);

        RawHttp.Response response = RawHttp.get(gateway.port(), "localhost:" + gateway.port(), "/vnc/7/a?" + query);

        assertEquals(200, response.status(), response.body());
        String target = response.body().split(" ")[1];
        assertEquals(decoded(query), decoded(target.substring(target.indexOf('?') + 1)), target);

        RawHttp.Response upgrade = RawHttp.upgrade(gateway.port(), "localhost:" + gateway.port(), "/vnc/7/websockify?" + query);
        assertEquals(502, upgrade.status(), "the sandbox was asked, and answered no upgrade: " + upgrade.body());
        assertTrue(!upgrade.body().contains(pod) && !response.body().contains(pod));
    }

    /** A query as a sandbox reads it: each {@code %XX} escape decoded, any other {@code %} as it is. */
    private static String decoded(String query)
    {
        java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
        for (int i = 0; i < query.length(); i++)
        {
            char c = query.charAt(i);
            if (c == '%' && i + 2 < query.length() && Character.digit(query.charAt(i + 1), 16) >= 0 && Character.digit(query.charAt(i + 2), 16) >= 0)
            {
                bytes.write(Integer.parseInt(query.substring(i + 1, i + 3), 16));
                i += 2;
            }
            else
            {
                bytes.write(c);
            }
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }

    private static int posts()
    {
        return (int)sandbox.received().stream().filter(r -> r.requestLine().startsWith("POST ")).count();
    }
}
