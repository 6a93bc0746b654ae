package io.sandgate.ingress;

import java.util.List;
import java.util.Map;

import io.sandgate.Sandgate;
import io.sandgate.config.ConfigException;
import io.sandgate.config.ConfigLoader;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LogCapture;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.SandboxBackend;
import io.sandgate.testing.WebSocketBackend;
import io.sandgate.web.NoScript;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The wall around a host-mode sandbox, against pages of the gateway's own origins (issue 52,
 * finding 1): a request with an unsafe method from a page that is not the sandbox's own never
 * reaches it, as its WebSocket refuses such a page ({@link io.sandgate.ingress.websocket.WebSocketOriginIT}); and with
 * {@code ingress.path-mode: false} no sandbox is served under the gateway's origin at all.
 */
@EachIngressFrontEnd
class HostModeWallIT
{
    private static final String PUBLIC = "http://gw.example";
    private static final String HOST_MODE_ALLOWED = "https://desk.example";

    @AutoClose
    private static SandboxBackend sandbox;
    @AutoClose
    private static WebSocketBackend desktop;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("server.public-origins", PUBLIC)
        .set("ingress.websocket.allowed-origins", "https://app.example")
        .set("ingress.host-mode.allowed-origins", HOST_MODE_ALLOWED)
        .set("ingress.host-pattern", "{id}.sbx.localhost")
        .set("ingress.static-routes", Map.of("1", sandbox.hostPort(), "2", desktop.hostPort())));
    /** Host mode only: no sandbox under the gateway's origin. */
    @RegisterExtension
    static final GatewayExtension hostOnly = new GatewayExtension(config -> config
        .set("server.public-origins", PUBLIC)
        .set("ingress.host-pattern", "{id}.sbx.localhost")
        .set("ingress.path-mode", "false")
        .set("ingress.static-routes", Map.of("1", sandbox.hostPort(), "2", desktop.hostPort())));

    @BeforeAll
    static void start() throws Exception
    {
        sandbox = SandboxBackend.start("one");
        desktop = WebSocketBackend.start("two");
    }

    @BeforeEach
    void clear()
    {
        sandbox.clearRequests();
    }

    private static String sandboxHost(int port)
    {
        return "1.sbx.localhost:" + port;
    }

    @ParameterizedTest(name = "{0} from {1}")
    @CsvSource({
        "POST,   http://gw.example",            // server.public-origins: every path-mode sandbox's pages
        "PUT,    http://gw.example",
        "PATCH,  http://127.0.0.1:PORT",        // loopback: the gateway on this machine
        "DELETE, http://localhost:PORT",
        "POST,   https://app.example",          // ingress.websocket.allowed-origins is path mode's
        "POST,   http://2.sbx.localhost:PORT",  // another sandbox
        "POST,   null",
        "FROB,   http://gw.example",            // a method the gateway does not know is not safe
    })
    void hostMode_anUnsafeRequestFromAPageNotTheSandboxs_neverReachesIt(String method, String origin) throws Exception
    {
        int port = gateway.port();

        RawHttp.Response response = RawHttp.send(port, method, sandboxHost(port), "/echo", "Origin", origin.replace("PORT", Integer.toString(port)),
            "Content-Length", "0");

        assertEquals(403, response.status(), response.body());
        assertTrue(response.body().contains("ingress.host-mode.allowed-origins"), response.body());
        assertEquals(NoScript.POLICY, response.header("Content-Security-Policy"), response.body());
        assertEquals(0, sandbox.requestCount(), "a refused request never reaches the sandbox");
    }

    @ParameterizedTest(name = "{0} from {1}")
    @CsvSource({
        "POST,    http://1.sbx.localhost:PORT",  // the sandbox's own page
        "DELETE,  http://1.sbx.localhost:PORT",
        "POST,    https://desk.example",         // ingress.host-mode.allowed-origins
        "GET,     http://gw.example",            // safe methods: the browser keeps what it reads from the page
        "OPTIONS, http://gw.example",            // a CORS preflight: the sandbox answers it
        "POST,    ",                             // no Origin: no browser sent it
    })
    void hostMode_theSandboxsOwnPages_safeMethods_andNonBrowsers_reachIt(String method, String origin) throws Exception
    {
        int port = gateway.port();
        String[] headers = origin == null ? new String[]{"Content-Length", "0"}
            : new String[]{"Origin", origin.replace("PORT", Integer.toString(port)), "Content-Length", "0"};

        RawHttp.Response response = RawHttp.send(port, method, sandboxHost(port), "/echo", headers);

        assertEquals(200, response.status(), response.body());
        assertEquals(1, sandbox.requestCount());
        assertEquals(method, sandbox.requests().get(0).method());
    }

    @Test
    void pathMode_unsafeRequestsKeepPathModesRules() throws Exception
    {
        int port = gateway.port();

        RawHttp.Response response = RawHttp.send(port, "POST", "gw.example", "/vnc/1/echo", "Origin", "http://gw.example", "Content-Length", "0");

        assertEquals(200, response.status(), response.body());
    }

    @ParameterizedTest
    @ValueSource(strings = {"/vnc/1/", "/vnc/1/echo", "/vnc/1", "/vnc/", "/vnc", "/vnc/websockify"})
    void pathModeOff_noSandboxIsServedUnderTheGatewaysOrigin(String path) throws Exception
    {
        int port = hostOnly.port();

        for (String host : new String[]{"127.0.0.1:" + port, "gw.example"})
        {
            RawHttp.Response response = RawHttp.get(port, host, path, "X-Sandbox-Id", "1");

            assertEquals(404, response.status(), host + path + " " + response.body());
            assertTrue(response.body().contains("ingress.path-mode"), response.body());
            assertEquals(NoScript.POLICY, response.header("Content-Security-Policy"), response.body());
        }
        assertEquals(0, sandbox.requestCount(), "nothing reached a sandbox");
        RawHttp.Response socket = RawHttp.upgrade(port, "127.0.0.1:" + port, "/vnc/2/websockify", "Origin", "http://127.0.0.1:" + port);
        assertEquals(404, socket.status(), socket.body());
    }

    @Test
    void pathModeOff_hostModeServes() throws Exception
    {
        int port = hostOnly.port();

        RawHttp.Response page = RawHttp.get(port, sandboxHost(port), "/vnc/1/echo");
        RawHttp.Response socket = RawHttp.upgrade(port, "2.sbx.localhost:" + port, "/websockify", "Origin", "http://2.sbx.localhost:" + port);

        assertEquals(200, page.status(), page.body());
        assertTrue(page.body().contains("backend=one") && page.body().contains("/vnc/1/echo"), "the whole path is the sandbox's: " + page.body());
        assertEquals(101, socket.status(), socket.body());
        assertEquals(200, RawHttp.get(port, "127.0.0.1:" + port, "/healthz").status(), "the gateway's own pages stay");
    }

    @Test
    void atStart_aHostPatternOnTheSiteOfAPublicOrigin_isWarnedAbout() throws Exception
    {
        try (LogCapture log = new LogCapture(Sandgate.class.getName()))
        {
            gateway.startAnother(config -> config.set("ingress.host-pattern", "{id}.sbx.gw.example"));
            gateway.startAnother(config -> config.set("ingress.host-pattern", "{id}.sbx.example-sandboxes.com"));

            List<String> warned = log.lines().stream().filter(line -> line.contains("one site")).toList();
            assertEquals(1, warned.size(), log.lines().toString());
            assertTrue(warned.get(0).contains("gw.example") && warned.get(0).contains("ingress.host-pattern"), warned.get(0));
        }
    }

    @Test
    void atStart_anAdminDashboardInThePathModeSandboxesOrigin_isWarnedAbout() throws Exception
    {
        try (LogCapture log = new LogCapture(Sandgate.class.getName()))
        {
            gateway.startAnother(config -> config.set("admin.token", "wall-it-admin-token"));
            gateway.startAnother(config -> config.set("admin.token", "wall-it-admin-token").set("server.internal-port", "0"));
            gateway.startAnother(config -> config.set("admin.token", "wall-it-admin-token").set("ingress.host-pattern", "{id}.sbx.localhost")
                .set("ingress.path-mode", "false"));

            List<String> warned = log.lines().stream().filter(line -> line.contains("admin dashboard")).toList();
            assertEquals(1, warned.size(), log.lines().toString());
            assertTrue(warned.get(0).contains("server.internal-port") && !warned.get(0).contains("wall-it-admin-token"), warned.get(0));
        }
    }

    @Test
    void pathModeOff_needsHostMode_andTheHostModeListTakesNoWildcard()
    {
        ConfigException off = assertThrows(ConfigException.class, () -> ConfigLoader.fromValues(Map.of("ingress.path-mode", "false")));
        assertTrue(off.getMessage().contains("ingress.path-mode") && off.getMessage().contains("ingress.host-pattern"), off.getMessage());
        ConfigException any = assertThrows(ConfigException.class, () -> ConfigLoader.fromValues(Map.of("ingress.host-pattern", "{id}.sbx.example.com",
            "ingress.host-mode.allowed-origins", "*")));
        assertTrue(any.getMessage().contains("ingress.host-mode.allowed-origins"), any.getMessage());
    }
}
