package io.sandgate.config;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class McpFederationConfigTest
{
    private static final List<Map<String, Object>> SERVERS = List.of(
        Map.of("name", "files", "url", "http://files:8080/mcp"),
        Map.of("name", "search", "url", "http://search:8080/mcp", "transport", "stateless"),
        Map.of("name", "old", "url", "http://old:8080/sse", "transport", "sse"));

    private static SandgateConfig load(Map<String, Object> federation)
    {
        return ConfigLoader.fromValues(Map.of("mcp.servers", SERVERS, "mcp.federations", List.of(federation)));
    }

    private static String refusal(Map<String, Object> federation)
    {
        return String.join("\n", assertThrows(ConfigException.class, () -> load(federation)).problems());
    }

    @Test
    void aFederationTakesItsDefaults()
    {
        McpFederation federation = load(Map.of("name", "all", "servers", List.of("files", "search"))).mcp().federation("all");
        assertEquals(List.of("files", "search"), federation.servers());
        assertEquals(McpFederation.Prefix.ALWAYS, federation.prefix());
        assertEquals("__", federation.separator());
        assertEquals("files__", federation.prefixOf("files"));
    }

    @Test
    void whenNeededAndASeparatorAreRead()
    {
        McpFederation federation = load(Map.of("name", "all", "servers", List.of("files"), "prefix", "when-needed", "separator", ".")).mcp().federation("all");
        assertEquals(McpFederation.Prefix.WHEN_NEEDED, federation.prefix());
        assertEquals(".", federation.separator());
    }

    @Test
    void membersMustBeConfiguredServers()
    {
        assertContains(refusal(Map.of("name", "all", "servers", List.of("files", "nope"))), "mcp.federations: all: server nope is not in mcp.servers");
    }

    @Test
    void aFederationMayNotTakeAServersName()
    {
        assertContains(refusal(Map.of("name", "files", "servers", List.of("search"))), "name is a server's too");
    }

    @Test
    void separatorsOnlyOfToolNameCharactersWithOneServerNamesCannotHold()
    {
        assertContains(refusal(Map.of("name", "all", "servers", List.of("files"), "separator", "/")), "separator /");
        assertContains(refusal(Map.of("name", "all", "servers", List.of("files"), "separator", "-")), "separator -");
        assertContains(refusal(Map.of("name", "all", "servers", List.of("files"), "separator", "a b")), "separator a b");
    }

    @Test
    void badPrefixModesEmptyAndRepeatedMembersAreRefused()
    {
        assertContains(refusal(Map.of("name", "all", "servers", List.of("files"), "prefix", "sometimes")), "prefix sometimes (expected: always or when-needed)");
        assertContains(refusal(Map.of("name", "all", "servers", List.of())), "servers: none");
        assertContains(refusal(Map.of("name", "all", "servers", List.of("files", "files"))), "each server once");
        assertContains(refusal(Map.of("name", "all", "servers", "files")), "expected: a list of names");
        assertContains(refusal(Map.of("name", "All", "servers", List.of("files"))), "name All");
    }

    @Test
    void anSseMemberIsFederatedLikeAnyOther()
    {
        assertEquals(List.of("old", "files"), load(Map.of("name", "all", "servers", List.of("old", "files"))).mcp().federation("all").servers());
    }

    @Test
    void aMemberThatAuthenticatesNeedsAFederationThatDoesToo()
    {
        Map<String, Object> auth = Map.of("issuers", List.of("https://as.example"), "jwks-url", "https://as.example/jwks", "resource-url", "https://gw.example");
        List<Map<String, Object>> servers = List.of(Map.of("name", "files", "url", "http://files:8080/mcp", "auth", auth));
        Map<String, Object> federation = Map.of("name", "all", "servers", List.of("files"));
        ConfigException open = assertThrows(ConfigException.class,
            () -> ConfigLoader.fromValues(Map.of("mcp.servers", servers, "mcp.federations", List.of(federation))));
        assertContains(String.join("\n", open.problems()), "server files authenticates its callers, and the federation's are not");

        McpFederation guarded = ConfigLoader.fromValues(Map.of("mcp.auth", auth, "mcp.servers", servers, "mcp.federations", List.of(federation)))
            .mcp().federation("all");
        assertEquals(List.of("https://gw.example/mcp/all"), guarded.auth().orElseThrow().audiences().subList(0, 1));
    }

    @Test
    void aMemberAskingMoreOfItsCallersThanTheFederation_isRefused()
    {
        Map<String, Object> auth = Map.of("issuers", List.of("https://as.example"), "jwks-url", "https://as.example/jwks", "resource-url", "https://gw.example");
        Map<String, Object> federation = Map.of("name", "all", "servers", List.of("files"));
        for (Map<String, Object> own : List.of(Map.<String, Object>of("scopes", List.of("files:admin")), Map.<String, Object>of("issuers", List.of("https://other.example"))))
        {
            List<Map<String, Object>> servers = List.of(Map.of("name", "files", "url", "http://files:8080/mcp", "auth", own));
            ConfigException wider = assertThrows(ConfigException.class,
                () -> ConfigLoader.fromValues(Map.of("mcp.auth", auth, "mcp.servers", servers, "mcp.federations", List.of(federation))));
            assertContains(String.join("\n", wider.problems()), "server files authenticates its callers otherwise than the federation does");
        }
        // The same scope required of the federation's callers too: every one of them has it.
        Map<String, Object> scoped = new java.util.HashMap<>(auth);
        scoped.put("scopes", List.of("files:admin"));
        List<Map<String, Object>> servers = List.of(Map.of("name", "files", "url", "http://files:8080/mcp", "auth", Map.of("scopes", List.of("files:admin"))));
        assertEquals("all", ConfigLoader.fromValues(Map.of("mcp.auth", scoped, "mcp.servers", servers, "mcp.federations", List.of(federation)))
            .mcp().federation("all").name());
    }

    @Test
    void twoFederationsOfOneNameAreRefused()
    {
        Map<String, Object> one = Map.of("name", "all", "servers", List.of("files"));
        ConfigException x = assertThrows(ConfigException.class,
            () -> ConfigLoader.fromValues(Map.of("mcp.servers", SERVERS, "mcp.federations", List.of(one, one))));
        assertContains(String.join("\n", x.problems()), "name all appears twice");
    }

    private static void assertContains(String text, String part)
    {
        assertTrue(text.contains(part), () -> "expected \"" + part + "\" in:\n" + text);
    }
}
