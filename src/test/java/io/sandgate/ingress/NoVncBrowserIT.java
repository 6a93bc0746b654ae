package io.sandgate.ingress;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandgate.testing.EachIngressFrontEnd;
import org.eclipse.jetty.toolchain.test.jupiter.WorkDirExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * noVNC 1.3 and 1.6+ connect through the gateway and each tab shows its own sandbox, in path mode
 * (noVNC 1.3's id-less WebSocket routed by the session cookie) and in host mode; the fixture and the
 * browser side are {@link NoVncBrowsers}'.
 */
@ExtendWith(WorkDirExtension.class)
@EachIngressFrontEnd(split = true)
class NoVncBrowserIT extends NoVncBrowsers
{
    @Test
    void noVnc13_inOneTab_connectsThroughTheIdlessWebSocketPath_andShowsItsSandbox() throws Exception
    {
        String page = gateway.uri() + "/vnc/" + ID_A + "/vnc.html?autoconnect=true&path=vnc/websockify";

        JsonNode result = check(new Tab(page, RED, "novnc13-sandboxA-red.png"));

        // noVNC 1.3 asked for the fixed path: only the session cookie could have routed it.
        assertWebSockets(result.path("tabs").get(0), "ws://127.0.0.1:" + gateway.port() + "/vnc/websockify", result);
    }

    @Test
    void noVnc16Style_twoTabsInOneBrowser_eachShowsItsOwnSandbox() throws Exception
    {
        String pageA = gateway.uri() + "/vnc/" + ID_A + "/";
        String pageB = gateway.uri() + "/vnc/" + ID_B + "/";

        JsonNode result = check(
            new Tab(pageA, RED, "novnc17-tab1-sandboxA-red.png"),
            new Tab(pageB, BLUE, "novnc17-tab2-sandboxB-blue.png"));

        String ws = "ws://127.0.0.1:" + gateway.port() + "/vnc/";
        assertWebSockets(result.path("tabs").get(0), ws + ID_A + "/websockify", result);
        assertWebSockets(result.path("tabs").get(1), ws + ID_B + "/websockify", result);
    }

    @Test
    void hostMode_noVnc17_twoSandboxesInTwoTabs_eachShowsItsOwnSandbox() throws Exception
    {
        String a = hostOrigin(gateway, ID_A);
        String b = hostOrigin(gateway, ID_B);

        JsonNode result = check(
            new Tab(a + "/", RED, "novnc17-host-sandboxA-red.png"),
            new Tab(b + "/", BLUE, "novnc17-host-sandboxB-blue.png"));

        assertWebSockets(result.path("tabs").get(0), ws(a) + "/websockify", result);
        assertWebSockets(result.path("tabs").get(1), ws(b) + "/websockify", result);
    }
}
