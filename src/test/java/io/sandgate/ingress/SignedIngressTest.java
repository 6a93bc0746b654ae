package io.sandgate.ingress;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.SandgateConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.ingress.IngressDecision.Forward;
import io.sandgate.ingress.IngressDecision.Redirect;
import io.sandgate.store.Store;
import io.sandgate.testing.MutableClock;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.GatewayException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Signed access through {@link Ingress} as the gateway builds it, on a clock the test moves: the
 * attacks on grants (replay, a short grant turned into a session renewed forever, access that no
 * one can take back) each refused.
 */
class SignedIngressTest
{
    private static final String ORIGIN = "http://gw.example";
    private static final Instant T0 = Instant.parse("2025-03-01T10:00:00Z");

    private final MutableClock clock = new MutableClock(T0);
    private final Schedulers schedulers = Schedulers.create();
    private Store store;
    private Ingress ingress;

    @BeforeEach
    void start()
    {
        SandgateConfig config = ConfigLoader.fromValues(Map.of(
            "ingress.access", "signed",
            "ingress.session-max-age", "1h",
            "ingress.cookie.secret", "0123456789abcdef0123456789abcdef",
            "ingress.static-routes", Map.of("1", "10.0.0.1:6080", "2", "10.0.0.2:6080")));
        store = Store.create(config, new SimpleMeterRegistry(), schedulers);
        // Redemptions on the test's clock too: the store's own would find grants made at T0 long expired.
        ingress = new Ingress(config.ingress(), "", store.routes(), Redemptions.inMemory(clock), new ClientInfo(List.of()), new SimpleMeterRegistry(), clock);
    }

    @AfterEach
    void stop()
    {
        store.close();
        schedulers.close();
    }

    private IngressDecision decide(String path, String query, String cookie)
    {
        return ingress.decide(new IngressRequest("GET", path, query, ORIGIN, null, cookie == null ? List.of() : List.of(cookie), null), false);
    }

    private int refusal(String path, String query, String cookie)
    {
        return assertThrows(GatewayException.class, () -> decide(path, query, cookie)).status();
    }

    /** Redeems a fresh five-minute grant for {@code id} on top of {@code cookie}; returns the new cookie value. */
    private String redeem(String id, String cookie)
    {
        String grant = ingress.grants().issue(id, "alice", Duration.ofMinutes(5));
        Redirect redirect = assertInstanceOf(Redirect.class, decide("/vnc/" + id + "/", "sandgate_grant=" + grant, cookie));
        return value(redirect.setCookie());
    }

    private static String value(String setCookie)
    {
        assertNotNull(setCookie);
        return setCookie.substring(setCookie.indexOf('=') + 1, setCookie.indexOf(';'));
    }

    /** The expiry of the first entry of a cookie value. */
    private static long firstExpiry(String cookie)
    {
        return Long.parseLong(cookie.split("~")[0].split("\\.")[1]);
    }

    @Test
    void aGrantIsRedeemedOnce_itsReplayIsRefusedAsUsed_evenByAnotherBrowser()
    {
        String grant = ingress.grants().issue("1", "alice", Duration.ofMinutes(5));
        assertInstanceOf(Redirect.class, decide("/vnc/1/", "sandgate_grant=" + grant, null));

        clock.advance(Duration.ofSeconds(10));
        GatewayException replay = assertThrows(GatewayException.class, () -> decide("/vnc/1/", "sandgate_grant=" + grant, null));
        assertEquals(403, replay.status());
        assertEquals("grant_used", replay.code());
    }

    @Test
    void aFiveMinuteGrant_opensAtMostTheSessionMaxAge_andSwitchingBetweenSandboxesNeverExtendsIt()
    {
        String cookie = redeem("1", null);
        assertEquals(T0.plus(Duration.ofHours(1)).getEpochSecond(), firstExpiry(cookie));
        clock.advance(Duration.ofMinutes(10));
        cookie = redeem("2", cookie);

        // Two tabs, switching every five minutes: each switch moves an entry first, as it is.
        for (int i = 0; i < 10; i++)
        {
            clock.advance(Duration.ofMinutes(5));
            String id = i % 2 == 0 ? "1" : "2";
            Forward forward = assertInstanceOf(Forward.class, decide("/vnc/" + id + "/", null, cookie));
            if (forward.setCookie() != null)
                cookie = value(forward.setCookie());
            assertTrue(firstExpiry(cookie) <= T0.plus(Duration.ofMinutes(70)).getEpochSecond(), cookie);
        }
        clock.set(T0.plus(Duration.ofHours(1)));
        assertEquals(403, refusal("/vnc/1/", null, cookie), "sandbox 1 ends an hour after its grant was redeemed");
        assertInstanceOf(Forward.class, decide("/vnc/2/", null, cookie));
        clock.set(T0.plus(Duration.ofMinutes(70)));
        assertEquals(403, refusal("/vnc/2/", null, cookie));
        assertEquals(403, refusal("/vnc/websockify", null, cookie));
    }

    @Test
    void aRevocation_refusesEveryCookieIssuedBeforeIt_onEverySource_andANewGrantOpensAgain()
    {
        String cookie = redeem("1", redeem("2", null));
        clock.advance(Duration.ofSeconds(1));
        store.routes().revoke("1", clock.instant());

        assertEquals(403, refusal("/vnc/1/", null, cookie));
        assertEquals(403, refusal("/vnc/websockify", null, cookie), "id-less requests too");
        assertInstanceOf(Forward.class, decide("/vnc/2/", null, cookie), "another sandbox's access stands");

        clock.advance(Duration.ofMillis(1));
        String again = redeem("1", cookie);
        assertInstanceOf(Forward.class, decide("/vnc/1/", null, again));
    }

    @Test
    void aReplacedPod_refusesTheOldPodsCookies()
    {
        store.routes().put("1", new Route("10.0.0.1", 6080, Optional.of("uid-a")));
        String cookie = redeem("1", null);
        assertInstanceOf(Forward.class, decide("/vnc/1/", null, cookie));

        // What the pod watcher writes when the sandbox's pod is replaced: a new generation.
        store.routes().put("1", new Route("10.0.0.9", 6080, Optional.of("uid-b")));
        GatewayException refused = assertThrows(GatewayException.class, () -> decide("/vnc/1/", null, cookie));
        assertEquals(403, refused.status());
        assertTrue(refused.getMessage().contains("pod replaced"), refused.getMessage());
    }

    @Test
    void cookiesOfOpenAccess_openNothingInSignedAccess()
    {
        String open = new SessionCookie(new Signer("0123456789abcdef0123456789abcdef".getBytes()), new IdSyntax(java.util.regex.Pattern.compile("\\d+"), 64),
            Duration.ofHours(12), 8, clock).withFirst(SessionCookie.Decoded.NONE, "1");
        assertEquals(403, refusal("/vnc/1/", null, open));
    }
}
