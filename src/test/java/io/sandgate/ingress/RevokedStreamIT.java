package io.sandgate.ingress;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;

import io.sandgate.core.Secret;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.ScriptedSandbox;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A revocation ends the answers a sandbox is streaming to the revoked sessions (an event stream, a
 * chunked download) as it ends their WebSockets, on both front-ends: otherwise a user whose access
 * was revoked goes on reading the sandbox for as long as it streams.
 */
@EachIngressFrontEnd
class RevokedStreamIT
{
    private static final String SECRET = "revoked-stream-it-secret-0123456789abcdef";
    private static final String ADMIN = "revoked-stream-it-admin-token";
    private static ScriptedSandbox sandbox;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("ingress.cookie.secret", SECRET)
        .set("ingress.access", "signed")
        .set("admin.token", ADMIN)
        .set("ingress.static-routes", Map.of("7", sandbox.hostPort())));

    @BeforeAll
    static void start() throws Exception
    {
        // An event stream of unknown length: an event every 100 ms, for a minute.
        sandbox = ScriptedSandbox.start((request, out) ->
        {
            out.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            for (int i = 0; i < 600; i++)
            {
                String event = "data: " + i + "\n\n";
                out.write((Integer.toHexString(event.length()) + "\r\n" + event + "\r\n").getBytes(StandardCharsets.US_ASCII));
                out.flush();
                pause();
            }
            return false;
        });
    }

    private static void pause()
    {
        try
        {
            Thread.sleep(100);
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
    }

    @AfterAll
    static void stop() throws Exception
    {
        sandbox.close();
    }

    @Test
    void revokedSession_stopsReceivingTheSandboxsStream() throws Exception
    {
        String grant = Grants.create(new Secret(SECRET), Clock.systemUTC()).issue("7", "alice", Duration.ofMinutes(5));
        RawHttp.Response redeemed = RawHttp.get(gateway.port(), "localhost:" + gateway.port(), "/vnc/7/?sandgate_grant=" + grant);
        assertEquals(303, redeemed.status(), redeemed.body());
        String cookie = redeemed.header("Set-Cookie").split(";")[0];

        try (Socket socket = new Socket("127.0.0.1", gateway.port()))
        {
            socket.setSoTimeout(200);
            socket.getOutputStream().write(("GET /vnc/7/events HTTP/1.1\r\nHost: localhost:" + gateway.port() + "\r\nCookie: " + cookie + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
            InputStream in = socket.getInputStream();
            StringBuilder seen = new StringBuilder();
            await().atMost(Duration.ofSeconds(10)).until(() -> read(in, seen) >= 0 && seen.indexOf("data: 2") >= 0);
            assertTrue(seen.toString().startsWith("HTTP/1.1 200"), seen.toString());

            HttpResponse<String> revoked = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + gateway.port() + "/admin/revoke/7"))
                .header("Authorization", "Bearer " + ADMIN).POST(HttpRequest.BodyPublishers.noBody()).build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(200, revoked.statusCode(), revoked.body());

            // The stream ends: the browser's connection is closed, or the answer cut short.
            await().atMost(Duration.ofSeconds(5)).until(() -> read(in, seen) < 0);
        }
    }

    /** What the socket has now, added to {@code seen}: how many bytes, 0 for none yet, or -1 once it is closed. */
    private static int read(InputStream in, StringBuilder seen)
    {
        byte[] buffer = new byte[8192];
        try
        {
            int n = in.read(buffer);
            if (n > 0)
                seen.append(new String(buffer, 0, n, StandardCharsets.ISO_8859_1));
            return n;
        }
        catch (SocketTimeoutException quiet)
        {
            return 0;
        }
        catch (IOException reset)
        {
            return -1;
        }
    }
}
