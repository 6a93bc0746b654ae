package io.sandgate.ingress.websocket;

import java.io.IOException;
import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeoutException;

import io.sandgate.web.GatewayException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What the browser is told when the sandbox leg of its upgrade does not open. */
class WebSocketUpgradeFailureTest
{
    @Test
    void aLegThatDidNotOpenInTime_is504()
    {
        GatewayException error = WebSocketBridge.failed(new TimeoutException("Total timeout 3000 ms elapsed"));

        assertEquals(504, error.status());
        assertEquals("upstream_timeout", error.code());
    }

    @Test
    void aSandboxThatCannotBeReached_is502()
    {
        GatewayException error = WebSocketBridge.failed(new CompletionException(new ConnectException("Connection refused")));

        assertEquals(502, error.status());
        assertEquals("upstream_unreachable", error.code());
    }

    @Test
    void aFailureOfAnyOtherKindOnTheWayToTheSandbox_is502_notAnErrorOfTheGateways()
    {
        GatewayException error = WebSocketBridge.failed(new IllegalStateException("request aborted"));

        assertEquals(502, error.status());
        assertEquals("upstream_failed", error.code());
    }

    @Test
    void aBrokenExchange_is502_andNeverNamesTheSandboxsAddress()
    {
        GatewayException error = WebSocketBridge.failed(new IOException("reset by 10.0.0.7:6080"));

        assertEquals(502, error.status());
        assertEquals(-1, error.getMessage().indexOf("10.0.0.7"));
    }
}
