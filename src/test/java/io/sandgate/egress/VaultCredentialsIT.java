package io.sandgate.egress;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.VaultDouble;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Credential injection with the {@code vault} secret source, against the protocol-faithful
 * {@link VaultDouble} (no Vault server can run on the build machines): keys keep flowing from the
 * cache while Vault is down, a key past its cache lifetime gives a clear 503, and Vault coming
 * back heals it without a restart.
 */
class VaultCredentialsIT
{
    private static final String KEY = "sk-" + "proj-" + "V4uLtK3yV4uLtK3yV4uL".repeat(2);
    private static final String TOKEN = "sgt_vault_agent_0123456789";

    private VaultDouble vault;
    private CredentialRoute route;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(config -> route.configure(config)
        .set("egress.secrets.source", "vault")
        .set("egress.secrets.vault.address", vault.address())
        .set("egress.secrets.vault.token", vault.rootToken())
        .set("egress.secrets.vault.refresh", "1s")
        .set("egress.secrets.vault.max-age", "3s"));

    @BeforeEach
    void start() throws Exception
    {
        vault = VaultDouble.start();
        vault.put("sandgate/openai", Map.of("value", KEY));
        vault.put("sandgate/agent-token", Map.of("value", TOKEN));
        route = CredentialRoute.start();
    }

    @AfterEach
    void stop() throws Exception
    {
        route.close();
        vault.close();
    }

    private HttpResponse<String> call() throws Exception
    {
        return route.call(gateway, TOKEN);
    }

    @Test
    void vaultDown_cachedKeysKeepWorking_thenA503ThatSaysWhy_andRecoveryWithoutRestart() throws Exception
    {
        assertEquals(200, call().statusCode());
        assertEquals("Bearer " + KEY, route.target.requests().get(0).header("Authorization"));

        vault.stop();
        HttpResponse<String> cached = call();
        assertEquals(200, cached.statusCode(), "the cached key is served while Vault is down: " + cached.body());

        await().atMost(Duration.ofSeconds(15)).until(() -> call().statusCode() == 503);
        HttpResponse<String> expired = call();
        assertEquals(503, expired.statusCode());
        assertTrue(expired.body().contains("credential openai is unavailable"), expired.body());
        assertTrue(expired.body().contains("expired"), expired.body());
        assertFalse(expired.body().contains(KEY) || expired.body().contains(vault.rootToken()), expired.body());

        vault.restart();
        await().atMost(Duration.ofSeconds(15)).until(() -> call().statusCode() == 200);
    }
}
