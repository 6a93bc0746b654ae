package io.sandgate.net;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

/** Origins on this machine pass with nothing configured; look-alikes of them do not. */
class OriginsTest
{
    private final Origins none = new Origins(List.of());

    @Test
    void loopbackOrigins_passUnconfigured()
    {
        assertTrue(none.allows("http://localhost", null));
        assertTrue(none.allows("http://localhost:6080", null));
        assertTrue(none.allows("http://127.0.0.1", null));
        assertTrue(none.allows("https://127.255.3.44:8443", null));
        assertTrue(none.allows("http://[::1]:9000", null));
        assertTrue(none.allows("HTTP://LOCALHOST:80", null), "canonical form: case and default port");
    }

    @Test
    void lookAlikes_andOtherHosts_doNot()
    {
        assertFalse(none.allows("http://127.0.0.1.attacker.example", null), "a name starting as a loopback address");
        assertFalse(none.allows("http://sandbox.localhost", null), "host mode's names");
        assertFalse(none.allows("http://128.0.0.1", null));
        assertFalse(none.allows("http://1270.0.0.1", null));
        assertFalse(none.allows("http://127.0.0.1111", null), "a fourth number of four digits");
        assertFalse(none.allows("http://127.0.0", null));
        assertFalse(none.allows("http://gw.example", null));
        assertFalse(none.allows("null", null));
        assertFalse(none.allows("file:///etc/passwd", null));
    }

    @Test
    void configuredAndPerRequestOrigins_pass()
    {
        Origins one = new Origins(List.of("https://gw.example"));
        assertTrue(one.allows("https://gw.example:443", null));
        assertFalse(one.allows("http://gw.example", null), "another scheme is another origin");
        assertTrue(none.allows("https://app.example", "https://app.example"));
    }

    @Test
    void exactly_letsInOnlyItsOriginsAndTheRequests_noLoopbackNorWildcard()
    {
        Origins exactly = Origins.exactly(List.of("https://desk.example"));

        assertTrue(exactly.allows("https://desk.example:443", null));
        assertTrue(exactly.allows("http://7.sbx.localhost:8080", "http://7.sbx.localhost:8080"));
        assertFalse(exactly.allows("http://localhost:8080", null), "the gateway on this machine is no sandbox's page");
        assertFalse(exactly.allows("http://127.0.0.1:8080", null));
        assertFalse(exactly.and(List.of("https://more.example")).allows("http://[::1]:8080", null), "and() keeps it so");
        assertFalse(exactly.allows("null", "null"));
        assertThrows(IllegalArgumentException.class, () -> Origins.exactly(List.of("*")));
    }
}
