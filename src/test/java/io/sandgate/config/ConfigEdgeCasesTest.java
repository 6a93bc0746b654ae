package io.sandgate.config;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Inputs found in review that once escaped as the wrong exception or went unreported. */
class ConfigEdgeCasesTest
{
    private static ConfigException problemsOf(Map<String, ?> values)
    {
        return assertThrows(ConfigException.class, () -> ConfigLoader.fromValues(values));
    }

    @Test
    void overflowingDuration_isAConfigErrorNamingTheKey()
    {
        ConfigException x = problemsOf(Map.of("ingress.idle-timeout", "99999999999999999d"));
        assertTrue(x.getMessage().contains("ingress.idle-timeout"), x.getMessage());
        ConfigException y = problemsOf(Map.of("ingress.idle-timeout", "99999999999999999999s"));
        assertTrue(y.getMessage().contains("expected: a duration"), y.getMessage());
    }

    @Test
    void recordLevelProblems_areAllReportedTogether()
    {
        ConfigException x = problemsOf(Map.of("ingress.prefix", "vnc", "ingress.cookie.secret", "short",
            "store.redis.address", "http://x", "ingress.trusted-proxies", "10.1/16"));
        List<String> problems = x.problems();
        assertEquals(4, problems.size(), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.startsWith("ingress.prefix")), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.startsWith("ingress.cookie.secret")), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.startsWith("store.redis.address")), problems.toString());
        assertTrue(problems.stream().anyMatch(p -> p.startsWith("ingress.trusted-proxies")), problems.toString());
    }

    @Test
    void emptySecret_saysANonEmptyOneIsExpected()
    {
        ConfigException x = assertThrows(ConfigException.class,
            () -> ConfigLoader.load(Map.of(), Map.of(), Map.of("SANDGATE_ADMIN_TOKEN", "")));
        assertTrue(x.getMessage().contains("admin.token") && x.getMessage().contains("expected: a non-empty secret"), x.getMessage());
    }

    @Test
    void kubernetesServiceLinkVariables_areNotSettings()
    {
        SandgateConfig config = ConfigLoader.load(Map.of(), Map.of(), Map.of(
            "SANDGATE_SERVICE_HOST", "10.96.0.12",
            "SANDGATE_SERVICE_PORT", "80",
            "SANDGATE_PORT", "tcp://10.96.0.12:80",
            "SANDGATE_PORT_80_TCP_ADDR", "10.96.0.12"));
        assertEquals(8080, config.server().port());
        // A real typo is still fatal.
        assertThrows(ConfigException.class, () -> ConfigLoader.load(Map.of(), Map.of(), Map.of("SANDGATE_SERVR_PORT", "1")));
    }

    @Test
    void configPathWithANul_isAConfigError()
    {
        ConfigException x = assertThrows(ConfigException.class,
            () -> ConfigLoader.load(Map.of(), Map.of("sandgate.config", "conf/\0x.yaml"), Map.of()));
        assertTrue(x.getMessage().contains("config:"), x.getMessage());
    }

    @Test
    void redisAddressCredentials_neverPrinted()
    {
        SandgateConfig config = ConfigLoader.fromValues(Map.of("store.redis.address", "rediss://user:hunter2@redis:6380"));
        assertFalse(config.toString().contains("hunter2"), config.toString());
        ConfigException x = problemsOf(Map.of("store.redis.address", "http://user:hunter2@redis"));
        assertFalse(x.getMessage().contains("hunter2"), x.getMessage());
    }

    @Test
    void structuredSettings_comeAsJsonFromTheEnvironment()
    {
        SandgateConfig config = ConfigLoader.load(Map.of(), Map.of(), Map.of(
            "SANDGATE_MCP_SERVERS", "[{\"name\":\"files\",\"url\":\"http://files:8080/mcp\"}]",
            "SANDGATE_EGRESS_POOLS", "{\"p\":{\"region\":\"eu\",\"nodes\":[{\"id\":\"n1\",\"address\":\"10.0.0.1:3128\"}]}}",
            "SANDGATE_EGRESS_ROUTES", "[{\"match\":{\"domains\":[\"*\"]},\"upstream\":\"p\"}]"));
        assertEquals("files", config.mcp().servers().get(0).name());
        assertEquals(McpConfig.Transport.STREAMABLE, config.mcp().servers().get(0).transport());
        assertEquals(3128, config.egress().pools().get("p").nodes().get(0).port());
        assertEquals("https", config.egress().routes().get(0).scheme());
    }

    @Test
    void egressAndMcpProblems_nameWhereTheyAre()
    {
        ConfigException x = problemsOf(Map.of(
            "egress.pools", Map.of("p", Map.of("nodes", List.of(Map.of("id", "n1", "address", "not an address")))),
            "mcp.servers", List.of(Map.of("name", "Bad Name", "url", "ftp://x"))));
        assertTrue(x.problems().stream().anyMatch(p -> p.startsWith("egress.pools.p.nodes")), x.problems().toString());
        assertTrue(x.problems().stream().anyMatch(p -> p.startsWith("mcp.servers")), x.problems().toString());

        ConfigException y = problemsOf(Map.of(
            "egress.pools", Map.of("p", Map.of("nodes", List.of(Map.of("id", "n1", "address", "10.0.0.1:3128")))),
            "egress.routes", List.of(Map.of("match", Map.of("domains", List.of("*")), "upstream", "missing"))));
        assertTrue(y.getMessage().contains("egress.routes: upstream missing"), y.getMessage());
    }
}
