package io.sandgate.config;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.sandgate.core.Secret;
import org.junit.jupiter.api.Test;

import static io.sandgate.config.ConfigProblems.problems;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The one Vault settings record: its defaults are the keys' defaults, and it is bound only for the vault source. */
class VaultSettingsTest
{
    private static final VaultAuth TOKEN = new VaultAuth.Token(new Secret("s.root-token"));

    private static Map<String, Object> vault(Map<String, Object> settings)
    {
        Map<String, Object> values = new HashMap<>(settings);
        values.put("egress.pools", Map.of("p", Map.of("nodes", List.of(Map.of("id", "n", "address", "127.0.0.1:1")))));
        values.put("egress.credentials", Map.of("openai", Map.of("hosts", List.of("api.openai.com"))));
        values.put("egress.secrets.source", "vault");
        values.putIfAbsent("egress.secrets.vault.address", "https://vault.internal:8200/");
        return values;
    }

    @Test
    void keysDefaults_areTheRecordsDefaults()
    {
        VaultSettings fromKeys = ConfigLoader.fromValues(vault(Map.of("egress.secrets.vault.token", "s.root-token")))
            .egress().credentials().vault().orElseThrow();

        assertEquals(VaultSettings.of("https://vault.internal:8200", fromKeys.auth()), fromKeys);
        assertEquals("https://vault.internal:8200", fromKeys.address(), "trailing slashes are dropped");
        assertEquals(VaultAuth.Method.TOKEN, fromKeys.auth().method());
    }

    @Test
    void everyKey_reachesTheRecord()
    {
        VaultSettings settings = ConfigLoader.fromValues(vault(Map.of(
            "egress.secrets.vault.namespace", "team-a",
            "egress.secrets.vault.auth", "kubernetes",
            "egress.secrets.vault.kubernetes-role", "sandgate",
            "egress.secrets.vault.kubernetes-jwt-path", "/run/token",
            "egress.secrets.vault.mount", "/kv/",
            "egress.secrets.vault.prefix", "gateway",
            "egress.secrets.vault.refresh", "1m",
            "egress.secrets.vault.max-age", "10m")))
            .egress().credentials().vault().orElseThrow();

        assertEquals(Optional.of("team-a"), settings.namespace());
        assertEquals(new VaultAuth.Kubernetes("sandgate", Path.of("/run/token"), "kubernetes"), settings.auth());
        assertEquals("kv", settings.kvMount());
        assertEquals("gateway", settings.pathPrefix());
        assertEquals(Duration.ofMinutes(1), settings.refreshInterval());
        assertEquals(Duration.ofMinutes(10), settings.cacheMaxAge());
    }

    @Test
    void otherSources_bindNoVaultSettings_evenWithVaultKeysSet()
    {
        Map<String, Object> values = vault(Map.of("egress.secrets.vault.auth", "approle"));
        values.put("egress.secrets.source", "file");

        assertTrue(ConfigLoader.fromValues(values).egress().credentials().vault().isEmpty());
    }

    @Test
    void whatTheAuthMethodNeeds_isRequired_namingTheKey()
    {
        assertTrue(problems(vault(Map.of())).contains(
            "egress.secrets.vault.token: missing (expected: a value when egress.secrets.vault.auth is token)"));
        assertTrue(problems(vault(Map.of("egress.secrets.vault.auth", "approle", "egress.secrets.vault.role-id", "r"))).contains(
            "egress.secrets.vault.secret-id: missing (expected: a value when egress.secrets.vault.auth is approle)"));
        assertTrue(problems(vault(Map.of("egress.secrets.vault.auth", "kubernetes"))).contains(
            "egress.secrets.vault.kubernetes-role: missing (expected: a value when egress.secrets.vault.auth is kubernetes)"));
    }

    @Test
    void badValues_areConfigProblems_namingTheKey_neverTheToken()
    {
        String address = problems(vault(Map.of("egress.secrets.vault.address", "vault:8200", "egress.secrets.vault.token", "s.root-token")));
        assertTrue(address.contains("egress.secrets.vault.address: vault:8200 (expected: http(s)://host:port)"), address);
        assertFalse(address.contains("s.root-token"), address);

        String refresh = problems(vault(Map.of("egress.secrets.vault.refresh", "0s", "egress.secrets.vault.token", "t")));
        assertTrue(refresh.contains("egress.secrets.vault.refresh: PT0S (expected: > 0)"), refresh);

        String mount = problems(vault(Map.of("egress.secrets.vault.mount", "/", "egress.secrets.vault.token", "t")));
        assertTrue(mount.contains("egress.secrets.vault.mount: '/' (expected: a mount path)"), mount);
    }

    @Test
    void withers_changeOneValue_andKeepTheRest()
    {
        VaultSettings base = VaultSettings.of("http://127.0.0.1:8200", TOKEN).withCacheMaxAge(Duration.ofMinutes(30));

        VaultSettings changed = base.withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(3)).withNamespace(" ");

        assertEquals(Duration.ofMinutes(30), changed.cacheMaxAge());
        assertEquals(Duration.ofSeconds(2), changed.openTimeout());
        assertEquals(Duration.ofSeconds(3), changed.readTimeout());
        assertEquals(Optional.empty(), changed.namespace(), "a blank namespace is none");
        assertEquals(base, changed.withTimeouts(VaultSettings.DEFAULT_OPEN_TIMEOUT, VaultSettings.DEFAULT_READ_TIMEOUT));
    }
}
