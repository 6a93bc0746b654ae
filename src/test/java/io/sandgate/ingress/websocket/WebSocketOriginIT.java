package io.sandgate.ingress.websocket;

import java.util.Map;

import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.WebSocketBackend;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Who may open a sandbox's WebSocket. In path mode: pages of loopback origins, of
 * {@code server.public-origins} and of {@code ingress.websocket.allowed-origins}. In host mode: the
 * sandbox's own pages and those of {@code ingress.host-mode.allowed-origins}, and nothing of the
 * gateway's: the path-mode pages of every sandbox run under the gateway's origins (issue 52, finding
 * 1: one of them borrowed a gateway page to open another sandbox's desktop). Never a page whose
 * origin merely matches the request's {@code Host}: a DNS-rebinding page controls both
 * ({@code Host: evil.example}, {@code Origin: http://evil.example}), and before this check it was let
 * in as "same origin".
 */
@EachIngressFrontEnd
class WebSocketOriginIT
{
    private static final String PUBLIC = "http://gw.example";
    private static final String ALLOWED = "https://app.example";
    private static final String HOST_MODE_ALLOWED = "https://desk.example";

    @AutoClose
    private static WebSocketBackend one;
    @AutoClose
    private static WebSocketBackend two;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("server.public-origins", PUBLIC)
        .set("ingress.websocket.allowed-origins", ALLOWED)
        .set("ingress.host-mode.allowed-origins", HOST_MODE_ALLOWED)
        .set("ingress.host-pattern", "{id}.sbx.localhost")
        .set("ingress.static-routes", Map.of("1", one.hostPort(), "2", two.hostPort())));

    @BeforeAll
    static void start() throws Exception
    {
        one = WebSocketBackend.start("one");
        two = WebSocketBackend.start("two");
    }

    private static RawHttp.Response upgrade(String host, String path, String origin) throws Exception
    {
        int port = gateway.port();
        host = host.replace("PORT", Integer.toString(port));
        return origin == null ? RawHttp.upgrade(port, host, path) : RawHttp.upgrade(port, host, path, "Origin", origin.replace("PORT", Integer.toString(port)));
    }

    @ParameterizedTest(name = "Host {0}, Origin {1}")
    @CsvSource({
        "127.0.0.1:PORT,   http://127.0.0.1:PORT",      // loopback: a browser on this machine
        "localhost:PORT,   http://localhost:PORT",
        "gw.example,       http://gw.example",          // server.public-origins
        "127.0.0.1:PORT,   http://gw.example",
        "gw.example,       https://app.example",        // ingress.websocket.allowed-origins
    })
    void pathMode_configuredAndLoopbackOrigins_open(String host, String origin) throws Exception
    {
        int before = one.connections.get();

        RawHttp.Response response = upgrade(host, "/vnc/1/websockify", origin);

        assertEquals(101, response.status(), response.body());
        assertEquals("/websockify", one.lastPath.get());
        awaitConnections(one, before + 1);
    }

    @ParameterizedTest(name = "Host {0}, Origin {1}")
    @CsvSource({
        "evil.example,     http://evil.example",        // DNS rebinding: the page's own Host
        "evil.example:PORT, http://evil.example:PORT",
        "gw.example,       http://evil.example",
        "gw.example,       https://gw.example",         // another scheme is another origin
        "gw.example,       http://1.sbx.localhost:PORT", // a sandbox's origin is only its own host's
        "gw.example,       https://desk.example",       // the host-mode list is for host mode
        "gw.example,       null",                       // sandboxed frames, file: pages
    })
    void pathMode_anyOtherOrigin_isRefused_namingTheSettings(String host, String origin) throws Exception
    {
        int before = one.connections.get();

        RawHttp.Response response = upgrade(host, "/vnc/1/websockify", origin);

        assertRefused(response);
        assertEquals(before, one.connections.get(), "a refused upgrade never reaches the sandbox");
    }

    @ParameterizedTest(name = "Host {0}, Origin {1}")
    @CsvSource({
        "1.sbx.localhost:PORT, http://1.sbx.localhost:PORT",   // the sandbox's own page
        "1.SBX.localhost:PORT, http://1.sbx.localhost:PORT",
        "1.sbx.localhost:PORT, https://desk.example",          // ingress.host-mode.allowed-origins
    })
    void hostMode_theSandboxsOwnOrigin_opensItsWebSocket(String host, String origin) throws Exception
    {
        int before = one.connections.get();

        RawHttp.Response response = upgrade(host, "/websockify?token=x", origin);

        assertEquals(101, response.status(), response.body());
        assertEquals("/websockify?token=x", one.lastPath.get(), "host mode forwards the whole path");
        awaitConnections(one, before + 1);
    }

    @ParameterizedTest(name = "Host {0}, Origin {1}")
    @CsvSource({
        "1.sbx.localhost:PORT, http://2.sbx.localhost:PORT",    // another sandbox's page
        "1.sbx.localhost:PORT, http://1.sbx.localhost:1",       // the same host on another port
        "1.sbx.localhost:PORT, https://1.sbx.localhost:PORT",
        "1.sbx.localhost:PORT, http://1.sbx.localhost.evil.example:PORT",
        "1.sbx.localhost:PORT, null",
    })
    void hostMode_anotherSandboxsPage_cannotOpenIt(String host, String origin) throws Exception
    {
        int before = one.connections.get();

        RawHttp.Response response = upgrade(host, "/websockify", origin);

        assertRefusedInHostMode(response);
        assertEquals(before, one.connections.get());
    }

    /**
     * Every path-mode sandbox's pages run under the gateway's own origins: a page there, or a window
     * one opens there, must not open a host-mode sandbox's socket with the user's cookie for it.
     */
    @ParameterizedTest(name = "Host {0}, Origin {1}")
    @CsvSource({
        "1.sbx.localhost:PORT, http://gw.example",          // server.public-origins
        "1.sbx.localhost:PORT, http://127.0.0.1:PORT",      // loopback: the gateway on this machine
        "1.sbx.localhost:PORT, http://localhost:PORT",
        "1.sbx.localhost:PORT, https://app.example",        // ingress.websocket.allowed-origins: path mode's
    })
    void hostMode_theGatewaysOwnOrigins_cannotOpenIt(String host, String origin) throws Exception
    {
        int before = one.connections.get();

        RawHttp.Response response = upgrade(host, "/websockify", origin);

        assertRefusedInHostMode(response);
        assertEquals(before, one.connections.get(), "a refused upgrade never reaches the sandbox");
    }

    @Test
    void withoutOrigin_itIsNoBrowser_andOpens() throws Exception
    {
        assertEquals(101, upgrade("evil.example", "/vnc/2/websockify", null).status());
        assertEquals(101, upgrade("2.sbx.localhost:PORT", "/websockify", null).status());
    }

    private static void assertRefused(RawHttp.Response response)
    {
        assertEquals(403, response.status(), response.body());
        assertTrue(response.body().contains("server.public-origins") && response.body().contains("ingress.websocket.allowed-origins"),
            "a refusal says which setting to change: " + response.body());
    }

    private static void assertRefusedInHostMode(RawHttp.Response response)
    {
        assertEquals(403, response.status(), response.body());
        assertTrue(response.body().contains("ingress.host-mode.allowed-origins") && !response.body().contains("server.public-origins"),
            "a refusal names the one setting that would let the page in: " + response.body());
        assertEquals("default-src 'none'; frame-ancestors 'none'; sandbox", response.header("Content-Security-Policy"), response.body());
    }

    private static void awaitConnections(WebSocketBackend backend, int expected) throws InterruptedException
    {
        for (int i = 0; i < 100 && backend.connections.get() < expected; i++)
            Thread.sleep(20);
        assertEquals(expected, backend.connections.get());
    }
}
