package io.sandgate.secrets;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.config.VaultAuth;
import io.sandgate.config.VaultSettings;
import io.sandgate.core.Schedulers;
import io.sandgate.core.Secret;
import io.sandgate.secrets.SecretUnavailableException.Reason;
import io.sandgate.testing.MutableClock;
import io.sandgate.testing.VaultDouble;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Vault source against {@link VaultDouble}, or against a real Vault when {@code VAULT_ADDR}
 * and {@code VAULT_TOKEN} are set (KV v2 at {@code secret/}; test values are written under a
 * fresh prefix through the HTTP API). Scenarios that need the double's switches (seal, stop,
 * short token TTLs, logins) are skipped against a real Vault.
 */
class VaultSecretSourceIT
{
    private static final Duration REFRESH = Duration.ofMinutes(5);
    private static final Duration MAX_AGE = Duration.ofHours(1);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    private VaultDouble vault;
    private String address;
    private String rootToken;
    private String prefix;
    private MutableClock clock;
    private final Schedulers schedulers = Schedulers.create();
    private final List<VaultSecretSource> sources = new ArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();

    @BeforeEach
    void setUp()
    {
        String realAddress = System.getenv("VAULT_ADDR");
        String realToken = System.getenv("VAULT_TOKEN");
        if (realAddress != null && !realAddress.isBlank() && realToken != null && !realToken.isBlank())
        {
            address = realAddress;
            rootToken = realToken;
        }
        else
        {
            vault = VaultDouble.start();
            address = vault.address();
            rootToken = vault.rootToken();
        }
        prefix = "sandgate-it/" + UUID.randomUUID();
        clock = new MutableClock(Instant.parse("2025-03-01T10:00:00Z"));
    }

    @AfterEach
    void tearDown()
    {
        sources.forEach(VaultSecretSource::close);
        schedulers.close();
        if (vault != null)
            vault.close();
    }

    private void needsDouble()
    {
        assumeTrue(vault != null, "needs the Vault double's switches; skipped against a real Vault");
    }

    private VaultSettings settings(VaultAuth auth)
    {
        return VaultSettings.of(address, auth)
            .withPathPrefix(prefix)
            .withRefreshInterval(REFRESH)
            .withCacheMaxAge(MAX_AGE)
            .withTimeouts(Duration.ofSeconds(2), Duration.ofSeconds(2));
    }

    private VaultSecretSource source(VaultAuth auth)
    {
        VaultSecretSource source = new VaultSecretSource(settings(auth), clock, schedulers);
        sources.add(source);
        return source;
    }

    private VaultSecretSource tokenSource()
    {
        return source(new VaultAuth.Token(new Secret(rootToken)));
    }

    /** Registers an AppRole with the double and returns it as a source's login. */
    private VaultAuth knownAppRole()
    {
        vault.appRole("role", "secret");
        return new VaultAuth.AppRole(new Secret("role"), new Secret("secret"));
    }

    /** Writes a KV v2 version through the HTTP API, as an operator would. */
    private int write(String path, Map<String, String> data)
    {
        try
        {
            HttpRequest request = HttpRequest.newBuilder(URI.create(address + "/v1/secret/data/" + path))
                .header("X-Vault-Token", rootToken)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(JSON.writeValueAsString(Map.of("data", data))))
                .build();
            HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
            assertEquals(200, response.statusCode(), response.body());
            return JSON.readTree(response.body()).path("data").path("version").asInt();
        }
        catch (IOException | InterruptedException x)
        {
            throw new AssertionError("cannot write " + path, x);
        }
    }

    private int writeValue(String name, String value)
    {
        return write(prefix + "/" + name, Map.of("value", value));
    }

    private static SecretUnavailableException unavailable(VaultSecretSource source, String name)
    {
        return assertThrows(SecretUnavailableException.class, () -> source.get(name));
    }

    // ---------------------------------------------------------------------------- reads

    @Test
    void readsValueAndSeesANewVersionAfterTheRefreshInterval()
    {
        assertEquals(1, writeValue("openai", "sk-one"));
        VaultSecretSource source = tokenSource();
        assertEquals("sk-one", source.get("openai").reveal());

        assertEquals(2, writeValue("openai", "sk-two"));
        assertEquals("sk-one", source.get("openai").reveal(), "cached within the refresh interval");
        long readsBefore = source.reads();

        clock.advance(REFRESH.plusSeconds(1));
        await().atMost(Duration.ofSeconds(10)).until(() -> "sk-two".equals(source.get("openai").reveal()));
        assertEquals(readsBefore + 1, source.reads(), "one background refresh, not one per get");
    }

    @Test
    void pathAndFieldSyntaxReadsThatFieldWithoutThePrefix()
    {
        write(prefix + "-team/keys", Map.of("github", "ghs-field", "value", "other"));
        VaultSecretSource source = tokenSource();

        assertEquals("ghs-field", source.get(prefix + "-team/keys#github").reveal());
    }

    @Test
    void unknownNameAndMissingFieldAreUnknown()
    {
        writeValue("present", "sk-present");
        VaultSecretSource source = tokenSource();

        SecretUnavailableException missing = unavailable(source, "absent");
        assertEquals(Reason.UNKNOWN, missing.reason());
        assertTrue(missing.getMessage().contains("'absent'"), missing.getMessage());

        SecretUnavailableException field = unavailable(source, prefix + "/present#nope");
        assertEquals(Reason.UNKNOWN, field.reason());
        assertTrue(field.getMessage().contains("'nope'"), field.getMessage());
        assertFalse(field.getMessage().contains("sk-present"), field.getMessage());
    }

    // ---------------------------------------------------------------------------- auth

    @Test
    void tokenAuthLooksTheTokenUpAtStart()
    {
        writeValue("openai", "sk-token");
        VaultSecretSource source = tokenSource();

        assertEquals("sk-token", source.get("openai").reveal());
        assertEquals(0, source.logins(), "a given token is used, not replaced");
        if (vault != null)
            assertEquals(1, vault.lookups());
    }

    @Test
    void appRoleLogsInWithRoleIdAndSecretId()
    {
        needsDouble();
        writeValue("openai", "sk-approle");

        VaultSecretSource source = source(knownAppRole());

        assertEquals("sk-approle", source.get("openai").reveal());
        assertEquals(1, vault.logins());
        assertEquals(1, source.logins());
        assertNotNull(source.lastLogin());
    }

    @Test
    void wrongAppRoleSecretIdIsAClearErrorWithoutTheSecretId()
    {
        needsDouble();
        vault.appRole("sandgate-role-id", "right-secret-id");
        writeValue("openai", "sk-approle");

        VaultSecretSource source = source(new VaultAuth.AppRole(new Secret("sandgate-role-id"), new Secret("wrong-secret-id")));

        SecretUnavailableException x = unavailable(source, "openai");
        assertEquals(Reason.SOURCE_DOWN, x.reason());
        assertTrue(x.getMessage().contains("approle login"), x.getMessage());
        assertFalse(x.getMessage().contains("wrong-secret-id"), x.getMessage());
    }

    @Test
    void kubernetesLogsInWithRoleAndTheServiceAccountJwt() throws IOException
    {
        needsDouble();
        String jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6ZGVmYXVsdDpzYW5kZ2F0ZSJ9.c2ln";
        Path jwtFile = Files.writeString(dir.resolve("token"), jwt + "\n");
        vault.kubernetesRole("sandgate", jwt);
        writeValue("openai", "sk-kube");

        VaultSecretSource source = source(new VaultAuth.Kubernetes("sandgate", jwtFile, "kubernetes"));

        assertEquals("sk-kube", source.get("openai").reveal());
        assertEquals(1, vault.logins());
    }

    @Test
    void renewalIsScheduledFromTheLeaseAndReadsWorkAfterTheFirstTtl()
    {
        needsDouble();
        vault.loginTokens(Duration.ofSeconds(3), Duration.ofHours(1), true);
        writeValue("first", "sk-first");
        writeValue("later", "sk-later");
        VaultSecretSource source = source(knownAppRole());
        assertEquals("sk-first", source.get("first").reveal());
        Instant loggedIn = Instant.now();

        // Renewed at 2 s, then again 2 s later: the original 3 s lease is over by then.
        await().atMost(Duration.ofSeconds(15)).until(() -> vault.renewals() >= 2);
        assertTrue(Duration.between(loggedIn, Instant.now()).toMillis() > 3000);

        assertEquals("sk-later", source.get("later").reveal(), "read with the renewed token");
        assertEquals(1, vault.logins(), "renewed, not replaced");
        assertEquals(0, vault.denied());
        assertTrue(source.renewals() >= 2);
    }

    @Test
    void givenRenewableTokenIsRenewedToo()
    {
        needsDouble();
        String token = vault.createToken(Duration.ofSeconds(3), Duration.ofHours(1), true);
        writeValue("later", "sk-later");
        VaultSecretSource source = source(new VaultAuth.Token(new Secret(token)));

        await().atMost(Duration.ofSeconds(15)).until(() -> vault.renewals() >= 2);

        assertEquals("sk-later", source.get("later").reveal());
    }

    @Test
    void tokenNearItsMaxTtlIsReplacedByANewLogin()
    {
        needsDouble();
        // Renewal at 2 s can only extend to the 3.5 s max TTL: the shortened lease says the end is near.
        vault.loginTokens(Duration.ofSeconds(3), Duration.ofMillis(3500), true);
        writeValue("later", "sk-later");
        VaultSecretSource source = source(knownAppRole());

        await().atMost(Duration.ofSeconds(15)).until(() -> vault.logins() >= 2);

        assertEquals("sk-later", source.get("later").reveal());
        assertTrue(vault.renewals() >= 1);
    }

    @Test
    void deniedReadLogsInAgainOnceAndRetries()
    {
        needsDouble();
        writeValue("first", "sk-first");
        writeValue("second", "sk-second");
        VaultSecretSource source = source(knownAppRole());
        assertEquals("sk-first", source.get("first").reveal());

        vault.revokeAllButRoot();

        assertEquals("sk-second", source.get("second").reveal());
        assertEquals(2, vault.logins());
    }

    @Test
    void permissionDeniedIsAClearError()
    {
        needsDouble();
        writeValue("private", "sk-private");
        vault.forbid("secret/data/" + prefix + "/private");
        VaultSecretSource source = source(knownAppRole());

        SecretUnavailableException x = unavailable(source, "private");

        assertEquals(Reason.SOURCE_DOWN, x.reason());
        assertEquals("vault denied access to secret/data/" + prefix + "/private (permission denied)", x.getMessage());
        assertEquals(2, vault.logins(), "one new login before giving up");
    }

    // ---------------------------------------------------------------------------- outages

    @Test
    void sealedVaultServesCachedValuesAndRefusesUncachedOnes()
    {
        needsDouble();
        writeValue("cached", "sk-cached");
        writeValue("uncached", "sk-uncached");
        VaultSecretSource source = tokenSource();
        assertEquals("sk-cached", source.get("cached").reveal());

        vault.seal();
        clock.advance(REFRESH.plusSeconds(1));
        long readsBefore = vault.reads();

        assertEquals("sk-cached", source.get("cached").reveal());
        await().atMost(Duration.ofSeconds(10)).until(() -> source.reads() == 2);
        assertEquals("sk-cached", source.get("cached").reveal(), "failed refresh keeps the value");
        assertEquals(readsBefore, vault.reads(), "a sealed vault serves no reads");

        SecretUnavailableException x = unavailable(source, "uncached");
        assertEquals(Reason.SOURCE_DOWN, x.reason());
        assertTrue(x.getMessage().contains("sealed"), x.getMessage());
        assertFalse(x.getMessage().contains("sk-"), x.getMessage());

        vault.unseal();
        assertEquals("sk-uncached", source.get("uncached").reveal());
    }

    @Test
    void stoppedVaultServesCachedValuesUntilMaxAgeThenExpiresAndRecovers()
    {
        needsDouble();
        writeValue("openai", "sk-cached");
        VaultSecretSource source = tokenSource();
        assertEquals("sk-cached", source.get("openai").reveal());

        vault.stop();

        SecretUnavailableException never = unavailable(source, "never-read");
        assertEquals(Reason.SOURCE_DOWN, never.reason());
        assertTrue(never.getMessage().contains("vault unreachable at " + address), never.getMessage());

        clock.advance(REFRESH.plusSeconds(1));
        assertEquals("sk-cached", source.get("openai").reveal());
        clock.advance(Duration.ofMinutes(30));
        assertEquals("sk-cached", source.get("openai").reveal());

        clock.advance(Duration.ofMinutes(30));
        SecretUnavailableException expired = unavailable(source, "openai");
        assertEquals(Reason.EXPIRED, expired.reason());
        assertTrue(expired.getMessage().startsWith("secret 'openai' expired from cache: vault unreachable for "),
            expired.getMessage());
        assertTrue(expired.getMessage().contains("vault unreachable at " + address), expired.getMessage());
        assertFalse(expired.getMessage().contains("sk-cached"), expired.getMessage());

        vault.restart();
        writeValue("openai", "sk-after-outage");
        // A background re-read started during the outage may land just after the restart and
        // cache the old value afresh; the new one then comes with the next refresh.
        clock.advance(REFRESH.plusSeconds(1));
        await().atMost(Duration.ofSeconds(10)).until(() -> source.get("openai").reveal().equals("sk-after-outage"));
    }

    @Test
    void vaultDownAtStartIsNotFatal()
    {
        needsDouble();
        writeValue("openai", "sk-late");
        vault.stop();
        VaultSecretSource source = tokenSource();

        assertEquals(Reason.SOURCE_DOWN, unavailable(source, "openai").reason());

        vault.restart();
        assertEquals("sk-late", source.get("openai").reveal());
    }

    @Test
    void namespaceIsSentWithEveryCall()
    {
        needsDouble();
        writeValue("openai", "sk-ns");
        VaultSecretSource source = new VaultSecretSource(settings(new VaultAuth.Token(new Secret(rootToken))).withNamespace("team-a"), clock, schedulers);
        sources.add(source);

        assertEquals("sk-ns", source.get("openai").reveal());
        assertEquals(List.of("team-a", "team-a"), vault.namespacesSeen(), "lookup-self and the read");
    }
}
