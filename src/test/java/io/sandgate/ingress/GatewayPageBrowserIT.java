package io.sandgate.ingress;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.core.Secret;
import io.sandgate.testing.BrowserCheck;
import io.sandgate.testing.EachIngressFrontEnd;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.LoopbackServers;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.WebSocketBackend;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Issue 52, finding 1, in a real Chromium: a path-mode page of sandbox 1 borrows a page of the
 * gateway's own to read sandbox 2's host-mode desktop. The setup is the one the README used to
 * recommend: signed access, sandboxes on {@code {id}.sbx.example.localhost}, the gateway on
 * {@code gw.example.localhost} (one site), path mode on. The victim holds sessions for both.
 *
 * <p>Sandbox 1's own policy keeps its page from opening sockets elsewhere, so its script opens
 * {@code /healthz} in a window: a same-origin page of the gateway's. If that page carries no policy,
 * the script injects a script into it, which opens sandbox 2's WebSocket; the browser sends sandbox
 * 2's cookie (SameSite=Lax, and the two hosts are one site), and the Origin is the gateway's public
 * one. Two walls must each stop it: the gateway's own pages allow no script and live in an opaque
 * origin (CSP {@code sandbox}), and a host-mode sandbox's socket accepts only its own origin. The
 * second run turns every policy off in the browser, so that only the gateway's Origin check is left.</p>
 *
 * <p>The browser side is {@code src/test/browser/gateway-page-check.mjs}; the attack itself is
 * sandbox 1's page below, as a hostile sandbox would serve it.</p>
 */
@EachIngressFrontEnd(split = true)
class GatewayPageBrowserIT
{
    private static final String SECRET = "gateway-page-it-secret-0123456789";
    private static final String HOST_PATTERN = "{id}.sbx.example.localhost";
    private static final String GATEWAY_HOST = "gw.example.localhost";
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** Sandbox 1's page: opens {@code /healthz}, injects a script there, and that script opens {@code ?target=}. */
    private static final String ATTACK_PAGE = """
        <!doctype html><title>sandbox 1</title>
        <script>
        const target = new URLSearchParams(location.search).get('target');
        const sleep = ms => new Promise(r => setTimeout(r, ms));
        // What runs in the borrowed window, under its policy, if any: sandbox 2's socket, its first frame.
        const injected = `window.stolen = new Promise(resolve => {
            let socket;
            try { socket = new WebSocket(TARGET); } catch (e) { resolve({ outcome: 'blocked', error: String(e) }); return; }
            const timer = setTimeout(() => { socket.close(); resolve({ outcome: 'no answer' }); }, 5000);
            socket.onmessage = e => { clearTimeout(timer); socket.close(); resolve({ outcome: 'read', frame: String(e.data) }); };
            socket.onclose = e => { clearTimeout(timer); resolve({ outcome: 'refused', code: e.code }); };
        });`;
        window.attack = (async () => {
            const w = window.open('/healthz', 'borrowed');
            if (!w)
                return { stage: 'open', outcome: 'no window' };
            const deadline = Date.now() + 5000;
            let doc = null;
            while (!doc) {
                try {
                    if (w.location.pathname === '/healthz' && w.document.readyState === 'complete')
                        doc = w.document;
                } catch (e) {
                    return { stage: 'window', outcome: 'unreachable', error: String(e) };
                }
                if (!doc && Date.now() > deadline)
                    return { stage: 'window', outcome: 'not loaded' };
                if (!doc)
                    await sleep(50);
            }
            const violations = [];
            doc.addEventListener('securitypolicyviolation', e => violations.push(e.effectiveDirective));
            const script = doc.createElement('script');
            script.textContent = injected.replace('TARGET', JSON.stringify(target));
            (doc.body || doc.documentElement).appendChild(script);
            await sleep(300);
            if (!w.stolen)
                return { stage: 'script', outcome: 'blocked', violations };
            return { stage: 'websocket', ...(await w.stolen), violations };
        })();
        </script>
        """;

    @AutoClose
    private static WebSocketBackend desktop2;
    @AutoClose("stop")
    private static Server sandbox1;

    @RegisterExtension
    static final GatewayExtension gateways = GatewayExtension.manual(config -> config
        .set("ingress.access", "signed")
        .set("ingress.cookie.secret", SECRET)
        .set("ingress.host-pattern", HOST_PATTERN)
        .set("ingress.static-routes", Map.of("1", "127.0.0.1:" + LoopbackServers.port(sandbox1),
            "2", desktop2.hostPort())));

    @BeforeAll
    static void start() throws Exception
    {
        desktop2 = WebSocketBackend.start("sandbox-2-desktop");
        sandbox1 = LoopbackServers.serve("sandbox-1", new AttackPage());
    }

    @Test
    void aPathModePage_cannotReadAHostModeDesktop_throughAPageOfTheGateways() throws Exception
    {
        Run run = run(false);

        assertControl(run);
        JsonNode attack = run.result.path("attack");
        assertNotEquals("read", attack.path("outcome").asText(), () -> "sandbox 1 read sandbox 2's desktop:\n" + run.output);
        assertTrue(attack.path("stage").asText().equals("window") || attack.path("stage").asText().equals("script"),
            () -> "the gateway's page must not run the injected script at all:\n" + run.output);
        assertEquals(run.connectionsBefore + 1, desktop2.connections.get(), () -> "only the control's socket reached sandbox 2:\n" + run.output);
    }

    @Test
    void withEveryPolicyOffInTheBrowser_theGatewayStillRefusesTheSocket_forItsPublicOrigin() throws Exception
    {
        Run run = run(true);

        assertControl(run);
        JsonNode attack = run.result.path("attack");
        assertEquals("websocket", attack.path("stage").asText(), () -> "without policies the script runs; the socket is what is left:\n" + run.output);
        assertEquals("refused", attack.path("outcome").asText(), () -> "sandbox 2's socket must refuse the gateway's origin:\n" + run.output);
        assertEquals(run.connectionsBefore + 1, desktop2.connections.get(), () -> "only the control's socket reached sandbox 2:\n" + run.output);
    }

    private static void assertControl(Run run)
    {
        JsonNode control = run.result.path("control");
        assertEquals("read", control.path("outcome").asText(), () -> "control: sandbox 2's own page reads its own desktop\n" + run.output);
        assertEquals("hello from sandbox-2-desktop", control.path("frame").asText(), run.output);
    }

    private record Run(JsonNode result, String output, int connectionsBefore)
    {
    }

    /** A gateway on a port known before it starts (its public origin names it), and one browser run against it. */
    private static Run run(boolean bypassCsp) throws Exception
    {
        int port = freePort();
        String gateway = "http://" + GATEWAY_HOST + ":" + port;
        String sandbox2 = "http://" + HOST_PATTERN.replace("{id}", "2") + ":" + port;
        RunningGateway running = gateways.startAnother(config -> config.set("server.port", port).set("server.public-origins", gateway));
        assertEquals(port, running.port());
        List<String> args = new ArrayList<>();
        if (bypassCsp)
            args.add("--bypass-csp");
        args.addAll(List.of("--visit", sandbox2 + "/?sandgate_grant=" + grant("2"),
            "--visit", gateway + "/vnc/1/?sandgate_grant=" + grant("1"),
            sandbox2 + "/", sandbox2.replace("http:", "ws:") + "/ws",
            gateway + "/vnc/1/attack?target=" + sandbox2.replace("http:", "ws:") + "/ws"));
        int before = desktop2.connections.get();
        String output = BrowserCheck.run("gateway-page-check.mjs", args, TIMEOUT, line -> { });
        String json = output.trim();
        JsonNode result = new ObjectMapper().readTree(json.substring(json.lastIndexOf('\n') + 1));
        return new Run(result, output, before);
    }

    private static String grant(String id)
    {
        return Grants.create(new Secret(SECRET), Clock.systemUTC()).issue(id, "victim", Duration.ofMinutes(5));
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket probe = new ServerSocket(0))
        {
            return probe.getLocalPort();
        }
    }

    /** Sandbox 1's web server: the attack at {@code /attack}, a plain page elsewhere. */
    private static final class AttackPage extends Handler.Abstract
    {
        @Override
        public boolean handle(Request request, Response response, Callback callback)
        {
            response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/html;charset=utf-8");
            String page = Request.getPathInContext(request).equals("/attack") ? ATTACK_PAGE : "<!doctype html><title>sandbox 1</title>";
            Content.Sink.write(response, true, page, callback);
            return true;
        }
    }
}
