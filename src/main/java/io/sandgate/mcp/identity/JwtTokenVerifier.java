package io.sandgate.mcp.identity;

import java.io.Closeable;
import java.io.IOException;
import java.net.MalformedURLException;
import java.net.URI;
import java.text.ParseException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

import com.nimbusds.jose.JOSEException;
import com.nimbusds.jose.JOSEObjectType;
import com.nimbusds.jose.JWSAlgorithm;
import com.nimbusds.jose.KeySourceException;
import com.nimbusds.jose.proc.BadJOSEException;
import com.nimbusds.jose.proc.DefaultJOSEObjectTypeVerifier;
import com.nimbusds.jose.proc.SecurityContext;
import com.nimbusds.jose.jwk.JWKMatcher;
import com.nimbusds.jose.jwk.JWKSelector;
import com.nimbusds.jose.jwk.source.JWKSetUnavailableException;
import com.nimbusds.jose.jwk.source.JWKSource;
import com.nimbusds.jose.jwk.source.JWKSourceBuilder;
import com.nimbusds.jose.util.DefaultResourceRetriever;
import com.nimbusds.jwt.JWTClaimsSet;
import com.nimbusds.jwt.proc.BadJWTException;
import com.nimbusds.jwt.proc.DefaultJWTClaimsVerifier;
import com.nimbusds.jwt.proc.DefaultJWTProcessor;
import com.nimbusds.jwt.proc.ExpiredJWTException;
import io.sandgate.config.McpAuthConfig;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * JWT access tokens, checked by nimbus-jose-jwt against the keys the issuer publishes: the key set
 * is fetched once ahead of the first call and then again before its cached copy expires, so that a
 * call does not wait for it; a token naming a key the copy lacks makes a fetch, two at most every few
 * seconds (a key rotation shows at once, a stream of forged key ids costs the issuer little); the
 * copy is used past its time while the issuer cannot be reached. Only the asymmetric algorithms
 * configured pass: {@code none} and HMAC never do, so that a public key is never taken for a secret.
 */
final class JwtTokenVerifier implements TokenVerifier, Closeable
{
    private static final Logger LOG = LoggerFactory.getLogger(JwtTokenVerifier.class);
    /** The largest key set read: an issuer's set is a few kilobytes; a bigger answer is not one. */
    private static final int JWKS_SIZE_LIMIT = 256 * 1024;
    private static final Duration JWKS_TIMEOUT = Duration.ofSeconds(5);
    private static final Duration CACHE_TIME_TO_LIVE = Duration.ofMinutes(5);
    /** The period in which an unknown key id may make the key set be fetched again at most twice (nimbus's rate limit). */
    static final Duration REFETCH_INTERVAL = Duration.ofSeconds(5);
    /** How long the last key set serves while the issuer cannot be reached. */
    private static final Duration OUTAGE_TOLERANCE = Duration.ofHours(12);

    /**
     * How long a verified token is taken on its digest without a new check: a signature check costs
     * many times a digest's CPU (ES256 most, see docs/BENCHMARKS.md); a key the issuer withdraws
     * stops its tokens within this time.
     */
    static final Duration VERIFIED_FOR = Duration.ofMinutes(1);

    private final JWKSource<SecurityContext> keys;
    private final Clock clock;
    private final Expiring<Principal> verified = new Expiring<>();
    private final DefaultJWTProcessor<SecurityContext> processor = new DefaultJWTProcessor<>();
    private final Set<String> issuers;

    /** @param clock when a verified token is to be checked again; not when it expires, which nimbus judges on the system's clock */
    JwtTokenVerifier(McpAuthConfig config, Clock clock)
    {
        this.clock = clock;
        this.issuers = Set.copyOf(config.issuers());
        URI jwks = config.jwksUrl().orElseThrow();
        try
        {
            int timeout = (int)JWKS_TIMEOUT.toMillis();
            this.keys = JWKSourceBuilder.<SecurityContext>create(jwks.toURL(), new DefaultResourceRetriever(timeout, timeout, JWKS_SIZE_LIMIT))
                .cache(CACHE_TIME_TO_LIVE.toMillis(), JWKS_TIMEOUT.toMillis())
                .refreshAheadCache(true)
                .rateLimited(REFETCH_INTERVAL.toMillis())
                .outageTolerant(OUTAGE_TOLERANCE.toMillis())
                .retrying(false)
                .build();
        }
        catch (MalformedURLException x)
        {
            throw new IllegalArgumentException("jwks-url " + jwks, x);
        }
        // RFC 9068 access tokens say "at+jwt"; many issuers say "JWT" or nothing. A typ is a media
        // type whose "application/" may be left out (RFC 7515, 4.1.9), so both spellings are one.
        processor.setJWSTypeVerifier(new DefaultJOSEObjectTypeVerifier<>(JOSEObjectType.JWT, new JOSEObjectType("application/jwt"),
            new JOSEObjectType("at+jwt"), new JOSEObjectType("application/at+jwt"), null));
        processor.setJWSKeySelector(new EdwardsKeys.Selector(algorithms(config.algorithms()), keys));
        processor.setJWSVerifierFactory(new EdwardsKeys.VerifierFactory());
        DefaultJWTClaimsVerifier<SecurityContext> claims = new DefaultJWTClaimsVerifier<>(new HashSet<>(config.audiences()), null,
            Set.of("iss", "sub", "exp", "aud"), null);
        claims.setMaxClockSkew((int)config.clockSkew().toSeconds());
        processor.setJWTClaimsSetVerifier(claims);
    }

    private static Set<JWSAlgorithm> algorithms(Collection<String> names)
    {
        Set<JWSAlgorithm> algorithms = new HashSet<>();
        for (String name : names)
            algorithms.add(JWSAlgorithm.parse(name));
        return algorithms;
    }

    /** Fetches the key set ahead of the first call; a failure is only logged, calls will try again. */
    void warm()
    {
        try
        {
            keys.get(new JWKSelector(new JWKMatcher.Builder().build()), null);
        }
        catch (KeySourceException x)
        {
            LOG.warn("Cannot fetch the MCP token issuer's key set yet; calls will try again: {}", x.getClass().getSimpleName());
        }
    }

    @Override
    public Principal verify(String token)
    {
        String digest = Tokens.digest(token);
        Instant now = clock.instant();
        Principal known = verified.get(digest, now);
        if (known != null)
            return known;
        Principal principal = check(token);
        Instant recheck = now.plus(VERIFIED_FOR);
        verified.put(digest, principal, principal.expiresAt().isBefore(recheck) ? principal.expiresAt() : recheck, now);
        return principal;
    }

    private Principal check(String token)
    {
        JWTClaimsSet claims;
        try
        {
            claims = processor.process(token, null);
        }
        catch (ParseException x)
        {
            throw new TokenRefusedException("the token is not a JWT");
        }
        catch (ExpiredJWTException x)
        {
            throw new TokenRefusedException("the token has expired");
        }
        catch (BadJWTException x)
        {
            throw new TokenRefusedException(claimsProblem(x.getMessage()));
        }
        catch (JWKSetUnavailableException x)
        {
            throw new TokenUncheckableException("the token cannot be checked now: the issuer's key set is unavailable");
        }
        catch (KeySourceException x)
        {
            // Rate limited: a key id the set lacked a moment ago, asked again; as a key nobody has.
            throw new TokenRefusedException("the token's signature is not valid for this gateway (algorithm, key or content)");
        }
        catch (BadJOSEException | JOSEException x)
        {
            // The library's words name no claim value, but only the type check is worth telling apart.
            boolean type = x.getMessage() != null && x.getMessage().contains("typ");
            throw new TokenRefusedException(type ? "the token's type (typ) is not an access token's"
                : "the token's signature is not valid for this gateway (algorithm, key or content)");
        }
        if (!issuers.contains(claims.getIssuer()))
            throw new TokenRefusedException("the token's issuer is not one this server accepts");
        return Principals.of(claims.getIssuer(), claims.getSubject(), clientId(claims), Principals.scopes(claims.getClaim("scope"), claims.getClaim("scp")),
            claims.getExpirationTime().toInstant());
    }

    private static String clientId(JWTClaimsSet claims)
    {
        Object clientId = claims.getClaim("client_id");
        if (clientId == null)
            clientId = claims.getClaim("azp");
        return clientId == null ? "" : clientId.toString();
    }

    /** The gateway's words for a claims check that failed; the library's name no claim value, but they are not ours to show. */
    private static String claimsProblem(String message)
    {
        String text = message == null ? "" : message;
        if (text.contains("before use time"))
            return "the token is not valid yet";
        if (text.contains("audience"))
            return "the token is for another audience than this server";
        if (text.contains("missing required claims"))
            return "the token lacks a required claim (iss, sub, exp, aud)";
        return "the token's claims are not valid";
    }

    @Override
    public void close() throws IOException
    {
        if (keys instanceof Closeable closeable)
            closeable.close();
    }
}
