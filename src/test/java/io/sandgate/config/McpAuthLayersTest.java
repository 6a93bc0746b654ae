package io.sandgate.config;

import java.net.URI;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** How a server's {@code auth} table lies over {@code mcp.auth}. */
class McpAuthLayersTest
{
    private static final Map<String, Object> GLOBAL = Map.of("issuers", List.of("https://as.example"), "jwks-url", "https://as.example/jwks",
        "resource-url", "https://gw.example", "scopes", List.of("mcp"));
    private static final Map<String, Object> INTROSPECTION = Map.of("url", "https://as.example/introspect", "client-id", "sandgate", "client-secret", "as-client");

    private static McpAuthConfig resolve(Map<String, ?> global, Object own)
    {
        return McpAuthConfig.resolve(global, own, "mcp.servers[0].auth", "tools", null).orElseThrow();
    }

    /** The global key set would otherwise win, and the server's introspection never be asked. */
    @Test
    void serverIntrospection_underAGlobalKeySet_replacesIt()
    {
        McpAuthConfig auth = resolve(GLOBAL, Map.of("introspection", INTROSPECTION));
        assertEquals(Optional.empty(), auth.jwksUrl());
        assertEquals(URI.create("https://as.example/introspect"), auth.introspection().orElseThrow().url());
        assertEquals(List.of("mcp"), auth.scopes(), "the other keys still come from mcp.auth");
        assertEquals(URI.create("https://gw.example/mcp/tools"), auth.resource());
    }

    @Test
    void serverKeySet_underGlobalIntrospection_replacesIt()
    {
        Map<String, Object> global = Map.of("issuers", List.of("https://as.example"), "introspection", INTROSPECTION, "resource-url", "https://gw.example");
        McpAuthConfig auth = resolve(global, Map.of("jwks-url", "https://other.example/jwks"));
        assertEquals(Optional.empty(), auth.introspection());
        assertEquals(URI.create("https://other.example/jwks"), auth.jwksUrl().orElseThrow());
        assertTrue(resolve(global, Map.of("scopes", List.of("x"))).introspection().isPresent(), "a table naming neither keeps the global one");
    }

    @Test
    void keySetAndIntrospectionInOneTable_areRefused()
    {
        IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
            () -> resolve(null, Map.of("issuers", List.of("https://as.example"), "jwks-url", "https://as.example/jwks", "introspection", INTROSPECTION,
                "resource-url", "https://gw.example")));
        assertTrue(refused.getMessage().contains("one of them"), refused.getMessage());
    }
}
