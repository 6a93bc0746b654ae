package io.sandgate.ingress;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * What a stored route value may name as its host. Values come from whoever writes the hash, so
 * anything that could smuggle a path, a user, a second authority or a header into the sandbox
 * leg's URI is refused, and the value is ignored as malformed.
 */
class RouteParseTest
{
    @ParameterizedTest
    @ValueSource(strings = {"10.0.0.7:6080", "sbx-1.pods.svc.cluster.local:5901", "[fd00::7]:6080", "[::1]:1", "A-Z.a-z.0-9:65535"})
    void hostNamesAndAddresses_areAccepted(String value)
    {
        Route route = Route.parse(value);
        assertEquals(value, route.authority());
    }

    @ParameterizedTest
    @ValueSource(strings = {":6080", "[]:6080", "host/path:80", "user@host:80", "host name:80", "host_name:80", "h\u00e9te:80",
        "host\r\nX-Evil: 1:80", "host?:80", "host#:80", "host%2f:80", "10.0.0.7:0", "10.0.0.7:65536", "10.0.0.7:http", "10.0.0.7"})
    void anythingElse_isRefused(String value)
    {
        assertThrows(IllegalArgumentException.class, () -> Route.parse(value));
    }

    @Test
    void aHostOfMoreThan253Characters_isRefused()
    {
        String longest = "a".repeat(253);
        assertEquals(longest, Route.parse(longest + ":80").host());
        assertThrows(IllegalArgumentException.class, () -> Route.parse(longest + "a:80"));
    }
}
