package io.sandgate.ingress;

import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

import io.sandgate.config.ConfigException;
import io.sandgate.config.ConfigLoader;
import io.sandgate.web.GatewayException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which hosts are a sandbox's own, and the origin each sandbox is served under. */
class HostPatternTest
{
    private static final IdSyntax DIGITS = new IdSyntax(Pattern.compile("\\d+"), 64);

    private static HostPattern pattern(String template)
    {
        return HostPattern.of(Optional.of(template), DIGITS);
    }

    @ParameterizedTest(name = "{0} -> {1} {2}")
    @CsvSource({
        "http://7.sbx.example.com,            7,     0, http://7.sbx.example.com",
        "http://7.sbx.example.com:8080,       7,     0, http://7.sbx.example.com:8080",
        "http://7.sbx.example.com:80,         7,     0, http://7.sbx.example.com",
        "https://7.sbx.example.com:443,       7,     0, https://7.sbx.example.com",
        "https://7.sbx.example.com:8443,      7,     0, https://7.sbx.example.com:8443",
        "http://37579.SBX.Example.COM,        37579, 0, http://37579.sbx.example.com",
    })
    void aHostOfThePatternsShape_namesItsSandbox_andItsOrigin(String origin, String id, int port, String own)
    {
        assertEquals(new SandboxHost(id, port, own), pattern("{id}.sbx.example.com").match(origin));
    }

    @ParameterizedTest(name = "{0} -> {1} port {2}")
    @CsvSource({
        "http://6080-7.sbx.example.com,        7,  6080, http://6080-7.sbx.example.com",
        "http://8888-41000.sbx.example.com:81, 41000, 8888, http://8888-41000.sbx.example.com:81",
    })
    void aPortInTheHost_namesTheSandboxPort(String origin, String id, int port, String own)
    {
        assertEquals(new SandboxHost(id, port, own), pattern("{port}-{id}.sbx.example.com").match(origin));
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "http://gw.example.com",
        "http://127.0.0.1:8080",
        "http://[::1]:8080",
        "http://sbx.example.com",
        "http://7.sbx.example.com.evil.example",
        "http://7.sbx.example.comx",
        "http://a.7.sbx.example.com",
        "http://7xsbx.example.com",
        "http://7.sbx.\u212Axample.com",
        "garbage",
    })
    void otherHosts_areNotSandboxHosts(String origin)
    {
        HostPattern hosts = pattern("{id}.sbx.example.com");
        assertNull(hosts.match(origin));
        assertFalse(hosts.isSandboxHost(origin.substring(origin.indexOf("://") + 3)));
    }

    @Test
    void withoutAPattern_everyHostIsTheGateways()
    {
        HostPattern none = HostPattern.of(Optional.empty(), DIGITS);
        assertSame(HostPattern.NONE, none);
        assertNull(none.match("http://7.sbx.example.com"));
        assertFalse(none.isSandboxHost("7.sbx.example.com"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"http://abc.sbx.example.com", "http://7-.sbx.example.com", "http://--.sbx.example.com"})
    void theShapeWithAMalformedId_isRefused_notServedAsTheGateway(String origin)
    {
        HostPattern hosts = pattern("{id}.sbx.example.com");
        assertEquals(400, assertThrows(GatewayException.class, () -> hosts.match(origin)).status());
    }

    @Test
    void aPortBeyondTheRange_isRefused()
    {
        GatewayException refused = assertThrows(GatewayException.class, () -> pattern("{port}-{id}.sbx.example.com").match("http://70000-7.sbx.example.com"));
        assertEquals(400, refused.status());
    }

    @Test
    void aPortWithALeadingZero_isNotTheSameOrigin_andNotASandboxHost()
    {
        assertNull(pattern("{port}-{id}.sbx.example.com").match("http://06080-7.sbx.example.com"));
    }

    @Test
    void theRoutesOwnPort_isAlwaysOpen_othersOnlyWhenAllowed()
    {
        Route route = Route.of("10.0.0.7", 6080);

        assertSame(route, new SandboxHost("7", 0, "http://7.sbx.example.com").target(route, Set.of()));
        assertSame(route, new SandboxHost("7", 6080, "http://6080-7.sbx.example.com").target(route, Set.of()));
        assertEquals(Route.of("10.0.0.7", 8888), new SandboxHost("7", 8888, "http://8888-7.sbx.example.com").target(route, Set.of(8888)));
        GatewayException refused = assertThrows(GatewayException.class,
            () -> new SandboxHost("7", 22, "http://22-7.sbx.example.com").target(route, Set.of(8888)));
        assertEquals(403, refused.status());
        assertTrue(refused.getMessage().contains("ingress.sandbox-ports"), refused.getMessage());
    }

    /**
     * Another port of the sandbox is the same pod and the same access: a tunnel opened there after a
     * revocation was compared with a route that had lost the revocation's stamp, taken for revoked
     * since, and closed every second.
     */
    @Test
    void anotherPort_keepsTheRoutesPodAndRevocation()
    {
        Route route = new Route("10.0.0.7", 6080, Optional.of("pod-uid-1"), Optional.of(java.time.Instant.parse("2026-12-01T10:00:00Z")));

        Route other = new SandboxHost("7", 8888, "http://8888-7.sbx.example.com").target(route, Set.of(8888));

        assertEquals(8888, other.port());
        assertEquals(route.generation(), other.generation());
        assertEquals(route.revokedBefore(), other.revokedBefore());
    }

    // ----------------------------------------------------------------------------------------
    // The configuration's checks
    // ----------------------------------------------------------------------------------------

    @ParameterizedTest
    @ValueSource(strings = {
        "sbx.example.com",               // no {id}
        "{id}.{id}.example.com",         // twice
        "{port}{id}.sbx.example.com",    // no literal between: splits more than one way
        "{id}{port}.sbx.example.com",
        "{id}",                          // no fixed domain: would take "localhost"
        "{id}-sbx",
        "{id}.sbx.example.com:8080",     // a port is the listener's, not the pattern's
        "{id}..example.com",
        ".{id}.example.com",
        "{id}.sbx_example.com",
        "{port}-{port}-{id}.example.com",
        "*.sbx.example.com",
    })
    void aMalformedPattern_stopsStartUp_namingTheKey(String template)
    {
        ConfigException x = assertThrows(ConfigException.class, () -> ConfigLoader.fromValues(Map.of("ingress.host-pattern", template)));
        assertTrue(x.getMessage().contains("ingress.host-pattern"), x.getMessage());
    }

    @Test
    void thePattern_isKeptInLowerCase()
    {
        assertEquals(Optional.of("{port}-{id}.sbx.example.com"),
            ConfigLoader.fromValues(Map.of("ingress.host-pattern", "{port}-{id}.SBX.Example.com")).ingress().hostPattern());
    }

    @Test
    void sandboxPorts_needAPortInThePattern_andAreNumbers()
    {
        assertEquals(Set.of(8888, 3000), ConfigLoader.fromValues(Map.of("ingress.host-pattern", "{port}-{id}.sbx.example.com",
            "ingress.sandbox-ports", "8888, 3000")).ingress().sandboxPorts());
        for (Map<String, Object> values : new Map[]{
            Map.of("ingress.host-pattern", "{id}.sbx.example.com", "ingress.sandbox-ports", "8888"),
            Map.of("ingress.sandbox-ports", "8888"),
            Map.of("ingress.host-pattern", "{port}-{id}.sbx.example.com", "ingress.sandbox-ports", "http"),
            Map.of("ingress.host-pattern", "{port}-{id}.sbx.example.com", "ingress.sandbox-ports", "70000")})
        {
            ConfigException x = assertThrows(ConfigException.class, () -> ConfigLoader.fromValues(values), values.toString());
            assertTrue(x.getMessage().contains("ingress.sandbox-ports"), x.getMessage());
        }
    }
}
