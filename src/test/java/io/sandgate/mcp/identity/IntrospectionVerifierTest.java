package io.sandgate.mcp.identity;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import io.sandgate.config.McpAuthConfig;
import io.sandgate.core.Secret;
import io.sandgate.testing.AuthorizationServerDouble;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Introspection answers kept, against the test authorization server's real {@code /introspect}. */
class IntrospectionVerifierTest
{
    private static final String AUDIENCE = "https://gw.example/mcp/tools";
    private static final String CLIENT_SECRET = "introspection-" + "secret-kept-5d21";
    private static final AuthorizationServerDouble as = AuthorizationServerDouble.start().client("sandgate", CLIENT_SECRET, Set.of());

    @AfterAll
    static void stop()
    {
        as.close();
    }

    @Test
    void aFloodOfMadeUpTokens_neverMakesAGoodTokenAskAgain()
    {
        McpAuthConfig config = new McpAuthConfig(List.of(as.issuer()), Optional.empty(),
            Optional.of(new McpAuthConfig.Introspection(URI.create(as.introspectionEndpoint()), "sandgate", "as-client")), List.of(AUDIENCE),
            List.of(), Set.of("RS256"), Duration.ZERO, URI.create(AUDIENCE), List.of(as.issuer()));
        int kept = 20;
        IntrospectionVerifier verifier = new IntrospectionVerifier(config, name -> new Secret(CLIENT_SECRET), Clock.systemUTC(), kept);
        String good = as.opaqueToken("alice", "client-1", null, AUDIENCE, Duration.ofMinutes(5));
        assertEquals("alice", verifier.verify(good).subject());
        int before = as.introspections();

        int flood = kept * 3;
        for (int i = 0; i < flood; i++)
        {
            String madeUp = "made-up-" + i;
            assertThrows(TokenRefusedException.class, () -> verifier.verify(madeUp));
        }
        assertEquals(before + flood, as.introspections(), "each made-up token asked once");
        assertEquals("alice", verifier.verify(good).subject());
        assertEquals(before + flood, as.introspections(), "the good token was asked about again after the flood");
    }
}
