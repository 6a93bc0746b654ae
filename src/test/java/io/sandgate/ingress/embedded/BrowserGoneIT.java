package io.sandgate.ingress.embedded;

import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.ScriptedSandbox;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A browser that leaves while a sandbox keeps it waiting takes its exchanges with it (core
 * front-end): the sandbox's connections close, and the browser's places in
 * {@code server.max-concurrent-requests-per-client} come back at once, not when the sandbox answers
 * or {@code ingress.idle-timeout} (an hour) passes.
 */
class BrowserGoneIT
{
    private static final int LIMIT = 4;
    private static ScriptedSandbox silent;
    private static ScriptedSandbox answering;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("server.max-concurrent-requests-per-client", Integer.toString(LIMIT))
        .set("ingress.cookie.secret", "browser-gone-it-secret-0123456789abcdef")
        .set("ingress.static-routes", Map.of("7", silent.hostPort(), "8", answering.hostPort())));

    @BeforeAll
    static void start() throws Exception
    {
        // Reads each request and never answers: the next read waits until the gateway closes the connection.
        silent = ScriptedSandbox.start((request, out) -> true);
        answering = ScriptedSandbox.start((request, out) ->
        {
            if (request.requestLine().contains("/slow"))
                pause();
            return ScriptedSandbox.ok(out, "fine");
        });
    }

    /** A sandbox taking its time, so that what the browser sends next arrives while its answer is awaited. */
    private static void pause()
    {
        try
        {
            Thread.sleep(500);
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
        }
    }

    @AfterAll
    static void stop() throws Exception
    {
        silent.close();
        answering.close();
    }

    /**
     * The attack: a sandbox's page fires requests at its own endpoint, which never answers, then the
     * user closes the tab. Every user behind the same address was refused for the hour the
     * abandoned requests kept their places.
     */
    @Test
    void browserThatLeavesASilentSandbox_getsItsPlacesBack_andTheSandboxsConnectionsClose() throws Exception
    {
        int before = silent.received().size();
        int closedBefore = silent.closedByPeer();
        List<Socket> tabs = new ArrayList<>();
        for (int i = 0; i < LIMIT; i++)
        {
            Socket tab = new Socket("127.0.0.1", gateway.port());
            tab.getOutputStream().write(("GET /vnc/7/wait" + i + " HTTP/1.1\r\nHost: localhost:" + gateway.port() + "\r\n\r\n")
                .getBytes(StandardCharsets.ISO_8859_1));
            tabs.add(tab);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> silent.received().size() == before + LIMIT);
        assertEquals(429, RawHttp.get(gateway.port(), "localhost:" + gateway.port(), "/vnc/8/page").status(), "the places are taken");

        for (Socket tab : tabs)
            tab.close();

        await().atMost(Duration.ofSeconds(10)).until(() -> silent.closedByPeer() - closedBefore >= LIMIT);
        await().atMost(Duration.ofSeconds(10)).until(() -> RawHttp.get(gateway.port(), "localhost:" + gateway.port(), "/vnc/8/page").status() == 200);
    }

    /**
     * The same with requests that carry a body, with a length or chunked, and one browser leaving
     * before its body is whole: the browser is watched from the moment its body has all arrived,
     * however the body was read.
     */
    @Test
    void browserThatLeavesAfterSendingABody_getsItsPlacesBack() throws Exception
    {
        int before = silent.received().size();
        int closedBefore = silent.closedByPeer();
        String host = "Host: localhost:" + gateway.port() + "\r\n";
        List<String> requests = List.of(
            "POST /vnc/7/form HTTP/1.1\r\n" + host + "Content-Length: 5\r\n\r\nhello",
            "POST /vnc/7/form HTTP/1.1\r\n" + host + "Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
            // Many pieces: the selector reports some while the gateway is busy sending the one before, and the gateway reads them itself.
            "PUT /vnc/7/form HTTP/1.1\r\n" + host + "Content-Length: 1000000\r\n\r\n" + "x".repeat(1_000_000));
        List<Socket> tabs = new ArrayList<>();
        for (String request : requests)
        {
            Socket tab = new Socket("127.0.0.1", gateway.port());
            tab.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            tabs.add(tab);
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> silent.received().size() == before + requests.size());
        // The fourth place: a body that never ends.
        Socket unfinished = new Socket("127.0.0.1", gateway.port());
        unfinished.getOutputStream().write(("POST /vnc/7/form HTTP/1.1\r\n" + host + "Content-Length: 100\r\n\r\nstart").getBytes(StandardCharsets.ISO_8859_1));
        tabs.add(unfinished);
        await().atMost(Duration.ofSeconds(10)).until(() -> RawHttp.get(gateway.port(), "localhost:" + gateway.port(), "/vnc/8/page").status() == 429);

        for (Socket tab : tabs)
            tab.close();

        // Every exchange ended at once: its sandbox connection closed.
        await().atMost(Duration.ofSeconds(10)).until(() -> silent.closedByPeer() - closedBefore >= tabs.size());
        await().atMost(Duration.ofSeconds(10)).until(() -> RawHttp.get(gateway.port(), "localhost:" + gateway.port(), "/vnc/8/page").status() == 200);
    }

    /**
     * A client that closes its sending side once its request is sent, while a sandbox keeps it
     * waiting, is taken for gone as nginx takes it: its connection is closed with nothing written
     * to it, not an error page naming what ended the exchange.
     */
    @Test
    void clientThatClosesItsSide_whileItsAnswerIsAwaited_getsNothing_andItsConnectionCloses() throws Exception
    {
        int closedBefore = silent.closedByPeer();
        try (Socket socket = new Socket("127.0.0.1", gateway.port()))
        {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(("GET /vnc/7/halfway HTTP/1.1\r\nHost: localhost:" + gateway.port() + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            await().atMost(Duration.ofSeconds(10)).until(() -> silent.received().stream().anyMatch(r -> r.requestLine().contains("/halfway")));
            socket.shutdownOutput();

            assertEquals("", new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1));
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> silent.closedByPeer() > closedBefore);
    }

    /**
     * A browser that closes as soon as it has its answer (`Connection: close`, a client done with
     * the gateway) has not left early: the exchange succeeded, and the sandbox's connection goes
     * back to its pool for the next request.
     */
    @Test
    void browserClosingOnceItHasItsAnswer_leavesTheSandboxConnectionPooled() throws Exception
    {
        int before = answering.connections();
        for (int i = 0; i < 100; i++)
        {
            try (Socket socket = new Socket("127.0.0.1", gateway.port()))
            {
                socket.setSoTimeout(10_000);
                socket.getOutputStream().write(("GET /vnc/8/page HTTP/1.1\r\nHost: localhost:" + gateway.port() + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.ISO_8859_1));
                String answer = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
                assertEquals(true, answer.startsWith("HTTP/1.1 200") && answer.endsWith("fine"), answer);
            }
        }
        assertEquals(true, answering.connections() - before <= 2, "sandbox connections opened for 100 requests: " + (answering.connections() - before));
    }

    /** Bytes arriving while an answer is awaited are not a departure when they are a pipelined request. */
    @Test
    void pipelinedRequest_isNoDeparture_andIsServedAfterTheAnswer() throws Exception
    {
        try (Socket socket = new Socket("127.0.0.1", gateway.port()))
        {
            socket.setSoTimeout(10_000);
            String host = "Host: localhost:" + gateway.port() + "\r\n";
            int before = answering.received().size();
            socket.getOutputStream().write(("GET /vnc/8/slow HTTP/1.1\r\n" + host + "\r\n").getBytes(StandardCharsets.ISO_8859_1));
            await().atMost(Duration.ofSeconds(10)).until(() -> answering.received().size() > before);
            socket.getOutputStream().write(("GET /vnc/8/two HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            String both = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
            assertEquals(2, both.split("HTTP/1.1 200", -1).length - 1, both);
        }
        catch (IOException x)
        {
            throw new AssertionError("the pipelined request was not served", x);
        }
    }
}
