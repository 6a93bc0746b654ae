package io.sandgate.ingress;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.function.Function;

import io.sandgate.core.Audit;
import io.sandgate.core.StoreUnavailableException;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Turns a grant token into a session cookie entry, once. The grant must be genuine, unexpired, for
 * the sandbox in the path and issued after the sandbox's last revocation; it is then recorded as
 * redeemed in {@link Redemptions} (shared by every replica that shares a store), and the entry it
 * opens is bound to the pod that serves the sandbox now and ends at the earlier of
 * {@code ingress.session-max-age} and the grant's own session limit, never later.
 */
final class GrantRedemption
{
    private final Grants grants;
    private final Redemptions redemptions;
    private final Function<String, Optional<Route>> routes;
    private final Duration sessionMaxAge;
    private final Clock clock;

    /**
     * @param routes the sandbox's current route (its generation and revocation stamp), from the route store
     */
    GrantRedemption(Grants grants, Redemptions redemptions, Function<String, Optional<Route>> routes, Duration sessionMaxAge, Clock clock)
    {
        this.grants = grants;
        this.redemptions = redemptions;
        this.routes = routes;
        this.sessionMaxAge = sessionMaxAge;
        this.clock = clock;
    }

    /**
     * @param id the sandbox the request's path names
     * @return the entry to put first in the session cookie
     * @throws GatewayException 403 for a grant that is forged, expired, for another sandbox, revoked
     *         or already used; 503 when the store cannot say whether it was used (the grant is then
     *         left unused, so the same link works once the store is back)
     */
    SessionCookie.Entry redeem(String token, String id)
    {
        Grants.Grant grant = grants.verify(token);
        if (grant == null || !grant.id().equals(id))
            throw GatewayException.forbidden("grant token is invalid, expired or for another sandbox");
        // Asked first: if the store is down this throws before the grant is spent.
        Optional<Route> route = routes.apply(id);
        if (route.isPresent() && route.get().revokedBefore().isPresent() && !grant.issued().isAfter(route.get().revokedBefore().get()))
            throw GatewayException.forbidden("access to this sandbox was revoked after this link was made; ask for a new link");
        boolean first;
        try
        {
            first = redemptions.redeem(grant.nonce(), grant.expires());
        }
        catch (StoreUnavailableException x)
        {
            throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE_503, "store_unavailable",
                "the link cannot be checked for reuse while the gateway's store is unreachable; it was not used, try it again shortly");
        }
        if (!first)
            throw new GatewayException(HttpStatus.FORBIDDEN_403, "grant_used", "this link was already used; each link opens a session once, ask for a new one");
        Instant now = clock.instant();
        Instant end = now.plus(sessionMaxAge);
        if (grant.sessionLimit().isPresent() && now.plus(grant.sessionLimit().get()).isBefore(end))
            end = now.plus(grant.sessionLimit().get());
        String generation = route.flatMap(Route::generation).map(SessionCookie::fingerprint).orElse("");
        Audit.grantRedeemed(id, grant.subject());
        return new SessionCookie.Entry(id, end.getEpochSecond(), now.toEpochMilli(), generation);
    }
}
