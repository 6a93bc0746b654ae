package io.sandgate.ingress;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

import io.sandgate.core.StoreUnavailableException;
import io.sandgate.testing.MutableClock;
import io.sandgate.web.GatewayException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Redeeming a grant: once, for its sandbox, not after a revocation, with an entry that ends in time. */
class GrantRedemptionTest
{
    private static final Instant T0 = Instant.parse("2025-03-01T10:00:00Z");
    private static final Duration MAX_AGE = Duration.ofHours(12);

    private final MutableClock clock = new MutableClock(T0);
    private final Grants grants = new Grants(new Signer("0123456789abcdef0123456789abcdef".getBytes(StandardCharsets.UTF_8)), clock);
    private final Map<String, Route> routes = new HashMap<>();
    private final MemoryRedemptions redeemed = new MemoryRedemptions(clock);
    private boolean storeDown;
    private final Redemptions redemptions = (nonce, until) ->
    {
        if (storeDown)
            throw new StoreUnavailableException("down", null);
        return redeemed.redeem(nonce, until);
    };
    private final GrantRedemption redemption = new GrantRedemption(grants, redemptions, id -> Optional.ofNullable(routes.get(id)), MAX_AGE, clock);

    @Test
    void aGrantOpensOneEntry_andItsReplayIsRefusedAsUsed()
    {
        String token = grants.issue("7", "alice", Duration.ofMinutes(5));
        SessionCookie.Entry entry = redemption.redeem(token, "7");
        assertEquals("7", entry.id());
        assertEquals(T0.toEpochMilli(), entry.issued());

        clock.advance(Duration.ofSeconds(30));
        GatewayException replay = assertThrows(GatewayException.class, () -> redemption.redeem(token, "7"));
        assertEquals(403, replay.status());
        assertEquals("grant_used", replay.code());
        assertTrue(replay.getMessage().contains("already used"), replay.getMessage());
    }

    @Test
    void aFiveMinuteGrant_opensAtMostTheSessionMaxAge_fromRedemption_notTheCookieLifetimeRenewedForever()
    {
        String token = grants.issue("7", "alice", Duration.ofMinutes(5));
        clock.advance(Duration.ofMinutes(4));
        SessionCookie.Entry entry = redemption.redeem(token, "7");
        assertEquals(T0.plus(Duration.ofMinutes(4)).plus(MAX_AGE).getEpochSecond(), entry.expires());
    }

    @Test
    void aGrantsOwnSessionLimit_endsTheEntrySooner_butNeverLaterThanTheMaxAge()
    {
        SessionCookie.Entry short_ = redemption.redeem(grants.issue("7", "alice", Duration.ofMinutes(5), Duration.ofMinutes(30)), "7");
        assertEquals(T0.plus(Duration.ofMinutes(30)).getEpochSecond(), short_.expires());

        SessionCookie.Entry long_ = redemption.redeem(grants.issue("7", "alice", Duration.ofMinutes(5), Duration.ofDays(30)), "7");
        assertEquals(T0.plus(MAX_AGE).getEpochSecond(), long_.expires());
    }

    @Test
    void theEntryIsBoundToThePodServingTheSandboxAtRedemption()
    {
        routes.put("7", new Route("10.0.0.7", 6080, Optional.of("uid-a")));
        SessionCookie.Entry bound = redemption.redeem(grants.issue("7", "alice", Duration.ofMinutes(5)), "7");
        assertEquals(SessionCookie.fingerprint("uid-a"), bound.generation());

        routes.put("8", Route.of("10.0.0.8", 6080));
        assertEquals("", redemption.redeem(grants.issue("8", "alice", Duration.ofMinutes(5)), "8").generation(), "no generation known");
        assertEquals("", redemption.redeem(grants.issue("9", "alice", Duration.ofMinutes(5)), "9").generation(), "no route yet");
    }

    @Test
    void aGrantMadeBeforeARevocation_isRefused_andOneMadeAfterIsRedeemed()
    {
        String before = grants.issue("7", "alice", Duration.ofMinutes(5));
        clock.advance(Duration.ofSeconds(1));
        routes.put("7", Route.of("10.0.0.7", 6080).revokedBefore(clock.instant()));
        clock.advance(Duration.ofMillis(1));
        String after = grants.issue("7", "alice", Duration.ofMinutes(5));

        GatewayException refused = assertThrows(GatewayException.class, () -> redemption.redeem(before, "7"));
        assertEquals(403, refused.status());
        assertTrue(refused.getMessage().contains("revoked"), refused.getMessage());
        assertEquals("7", redemption.redeem(after, "7").id());
    }

    @Test
    void whenTheStoreCannotSay_theGrantIsRefusedWith503_andStaysUnused()
    {
        String token = grants.issue("7", "alice", Duration.ofMinutes(5));
        storeDown = true;
        GatewayException refused = assertThrows(GatewayException.class, () -> redemption.redeem(token, "7"));
        assertEquals(503, refused.status());
        assertTrue(refused.getMessage().contains("not used"), refused.getMessage());

        storeDown = false;
        assertEquals("7", redemption.redeem(token, "7").id(), "the same link works once the store is back");
    }

    @Test
    void aGrantForAnotherSandbox_orAForgedOne_isRefused_withoutBeingSpent()
    {
        String token = grants.issue("7", "alice", Duration.ofMinutes(5));
        assertEquals(403, assertThrows(GatewayException.class, () -> redemption.redeem(token, "8")).status());
        assertEquals(403, assertThrows(GatewayException.class, () -> redemption.redeem(token + "x", "7")).status());
        assertEquals("7", redemption.redeem(token, "7").id());
    }
}
