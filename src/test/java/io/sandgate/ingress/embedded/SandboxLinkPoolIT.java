package io.sandgate.ingress.embedded;

import java.time.Duration;
import java.util.Map;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.ScriptedSandbox;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.sandgate.testing.BrowserRequests.get;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * How long the core front-end keeps a connection to a sandbox that it is not using: pod addresses
 * come and go, so an idle one closes after {@code ingress.destination-idle-timeout}, while one in use
 * stays however long it is used. The exchange's own timeout ({@code ingress.idle-timeout}) is far
 * longer here, so only the pool can close it.
 */
class SandboxLinkPoolIT
{
    /** Long enough that a loaded machine's stall between two requests 100 ms apart does not pass for disuse (300 ms did). */
    private static final Duration POOL_IDLE = Duration.ofSeconds(1);

    @AutoClose
    private static ScriptedSandbox sandbox;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("ingress.cookie.secret", "it-secret-0123456789abcdef-0123456789")
        .set("ingress.idle-timeout", "3600s")
        .set("ingress.destination-idle-timeout", POOL_IDLE.toMillis() + "ms")
        .set("ingress.static-routes", Map.of("7", sandbox.hostPort())));

    @BeforeAll
    static void start() throws Exception
    {
        sandbox = ScriptedSandbox.start((request, out) -> ScriptedSandbox.ok(out, "hello"));
    }

    @Test
    void aConnectionInUse_stays_andOnceUnusedItCloses_andTheNextRequestOpensAnother() throws Exception
    {
        int opened = sandbox.connections();
        int closed = sandbox.closedByPeer();

        // Three times the pool's timeout, one request every 100 ms: always the same connection.
        await().during(POOL_IDLE.multipliedBy(3)).atMost(POOL_IDLE.multipliedBy(10)).pollInterval(Duration.ofMillis(100))
            .until(() -> "hello".equals(get(gateway.uri(), "/vnc/7/busy").body()) && sandbox.connections() == opened + 1);
        assertEquals(closed, sandbox.closedByPeer());

        // Then unused: the gateway closes it, within the timeout and half of it again.
        await().atMost(Duration.ofSeconds(5)).until(() -> sandbox.closedByPeer() == closed + 1);

        assertEquals("hello", get(gateway.uri(), "/vnc/7/again").body());
        assertEquals(opened + 2, sandbox.connections());
    }
}
