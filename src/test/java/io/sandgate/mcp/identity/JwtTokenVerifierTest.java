package io.sandgate.mcp.identity;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import io.sandgate.config.McpAuthConfig;
import io.sandgate.testing.AuthorizationServerDouble;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A verified token is taken on its digest for a while, never past its expiry and never for another
 * token: what the digest saves must not change what passes.
 */
class JwtTokenVerifierTest
{
    private static final String AUDIENCE = "https://gw.example/mcp/tools";
    private static final AuthorizationServerDouble as = AuthorizationServerDouble.start();

    @AfterAll
    static void stop()
    {
        as.close();
    }

    private static JwtTokenVerifier verifier(Clock clock)
    {
        McpAuthConfig config = new McpAuthConfig(List.of(as.issuer()), Optional.of(URI.create(as.jwksUri())), Optional.empty(), List.of(AUDIENCE),
            List.of(), Set.of("RS256"), Duration.ZERO, URI.create(AUDIENCE), List.of(as.issuer()));
        return new JwtTokenVerifier(config, clock);
    }

    @Test
    void aVerifiedToken_stillExpiresOnTime()
    {
        JwtTokenVerifier verifier = verifier(Clock.systemUTC());
        String token = as.token().audience(AUDIENCE).expiresAt(Instant.now().plusSeconds(3)).sign();
        verifier.verify(as.token().audience(AUDIENCE).sign());
        assertEquals(as.issuer(), verifier.verify(token).issuer(), "passes while valid");
        await().atMost(Duration.ofSeconds(8)).untilAsserted(() -> assertThrows(TokenRefusedException.class, () -> verifier.verify(token)));
    }

    @Test
    void aTamperedCopy_ofAVerifiedToken_isCheckedAfresh_andRefused()
    {
        JwtTokenVerifier verifier = verifier(Clock.systemUTC());
        String token = as.token().audience(AUDIENCE).sign();
        verifier.verify(token);
        assertThrows(TokenRefusedException.class, () -> verifier.verify(as.tampered(token)));
        verifier.verify(token);
    }
}
