package io.sandgate.config;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static io.sandgate.config.ConfigProblems.problems;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Credential, agent and secret-source settings: defaults, and mistakes that stop start-up with a clear problem. */
class CredentialsConfigTest
{
    private static Map<String, Object> base()
    {
        Map<String, Object> values = new HashMap<>();
        values.put("egress.pools", Map.of("p", Map.of("nodes", List.of(Map.of("id", "n", "address", "127.0.0.1:1")))));
        values.put("egress.credentials", Map.of(
            "openai", Map.of("secret", "openai-key", "hosts", List.of("api.openai.com")),
            "anthropic", Map.of("hosts", List.of("api.anthropic.com"), "header", "x-api-key"),
            "maps", Map.of("secret", "g", "hosts", List.of("*.googleapis.com"), "query", "key")));
        values.put("egress.agents", List.of(Map.of("id", "a7", "token", "a7-token", "credentials", List.of("openai"), "expires", "2027-01-31T00:00:00Z")));
        values.put("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("api.openai.com")), "upstream", "p", "credential", "openai")));
        return values;
    }

    @Test
    void defaults_andTheProviderFormsOfAKey()
    {
        EgressConfig egress = ConfigLoader.fromValues(base()).egress();
        CredentialsConfig credentials = egress.credentials();
        assertEquals(CredentialsConfig.SourceKind.FILE, credentials.source());
        assertEquals(java.time.Duration.ofHours(24), credentials.overlap());
        assertEquals("Bearer {secret}", credentials.credentials().get("openai").format());
        assertEquals("{secret}", credentials.credentials().get("anthropic").format(), "other headers carry the bare key");
        assertEquals("anthropic", credentials.credentials().get("anthropic").secret(), "the secret name defaults to the credential's");
        assertEquals("key", credentials.credentials().get("maps").query().orElseThrow());
        assertTrue(credentials.credentials().get("maps").boundTo("maps.googleapis.com"));
        assertFalse(credentials.credentials().get("maps").boundTo("googleapis.com.evil.example"));
        assertEquals(Instant.parse("2027-01-31T00:00:00Z"), credentials.agents().get(0).expires().orElseThrow());
        assertEquals(EgressConfig.ScanMode.BLOCK, egress.routes().get(0).scan(), "request bodies are scanned and leaks blocked by default");
        assertTrue(egress.ssrfAllow().isEmpty(), "the SSRF guard allows nothing extra by default");
    }

    @Test
    void mistakes_stopStartUp_namingTheKey()
    {
        Map<String, Object> wildcard = base();
        wildcard.put("egress.credentials", Map.of("openai", Map.of("hosts", List.of("*"))));
        assertTrue(problems(wildcard).contains("egress.credentials.openai.hosts"), "a key bound to any host is refused");

        Map<String, Object> unknownForAgent = base();
        unknownForAgent.put("egress.agents", List.of(Map.of("id", "a", "credentials", List.of("stripe"))));
        assertTrue(problems(unknownForAgent).contains("egress.agents.a.credentials: stripe"));

        Map<String, Object> unknownForRoute = base();
        unknownForRoute.put("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("x")), "upstream", "p", "credential", "nope")));
        assertTrue(problems(unknownForRoute).contains("credential nope"));

        Map<String, Object> badFormat = base();
        badFormat.put("egress.credentials", Map.of("openai", Map.of("hosts", List.of("a"), "format", "Bearer")));
        assertTrue(problems(badFormat).contains("{secret}"));

        Map<String, Object> vaultWithoutAddress = base();
        vaultWithoutAddress.put("egress.secrets.source", "vault");
        assertTrue(problems(vaultWithoutAddress).contains("egress.secrets.vault.address"));

        Map<String, Object> badCidr = base();
        badCidr.put("egress.ssrf.allow", "10.0.0.0/99");
        assertTrue(problems(badCidr).contains("egress.ssrf.allow"));

        Map<String, Object> badScan = base();
        badScan.put("egress.scan.mode", "shout");
        assertTrue(problems(badScan).contains("egress.scan.mode"));

        Map<String, Object> badExpiry = base();
        badExpiry.put("egress.agents", List.of(Map.of("id", "a", "expires", "tomorrow")));
        assertTrue(problems(badExpiry).contains("egress.agents[0].expires"));
    }
}
