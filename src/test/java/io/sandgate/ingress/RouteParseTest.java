package io.sandgate.ingress;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
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

    @Test
    void aPausedRoute_parsesWithOrWithoutItsTarget_andFormatsBackTheSame()
    {
        Route bare = Route.parse("{\"state\":\"paused\"}");
        assertEquals(Route.State.PAUSED, bare.state());
        assertFalse(bare.running());
        assertNull(bare.authority(), "no target to forward to");
        assertEquals(bare, Route.parse(bare.format()));

        Route kept = Route.parse("{\"target\":\"10.0.0.7:6080\",\"generation\":\"uid-1\",\"state\":\"paused\"}");
        assertEquals("10.0.0.7:6080", kept.authority());
        assertEquals(Route.State.PAUSED, kept.state());
        assertEquals(kept, Route.parse(kept.format()));
        assertEquals(kept, Route.paused(java.util.Optional.of(Route.parse("{\"target\":\"10.0.0.7:6080\",\"generation\":\"uid-1\"}"))));

        assertTrue(Route.parse("{\"target\":\"10.0.0.7:6080\",\"state\":\"running\"}").running());
        assertEquals("10.0.0.7:6080", Route.parse("{\"target\":\"10.0.0.7:6080\",\"state\":\"running\"}").format(), "running is the default, not written");
    }

    @ParameterizedTest
    @ValueSource(strings = {"{\"state\":\"running\"}", "{\"state\":\"asleep\",\"target\":\"10.0.0.7:6080\"}", "{\"state\":1,\"target\":\"10.0.0.7:6080\"}",
        "{\"state\":\"paused\",\"target\":7}", "[\"paused\"]", "{}"})
    void aStateThatIsNotOneOfTheTwo_orARunningRouteWithoutATarget_isRefused(String value)
    {
        assertThrows(IllegalArgumentException.class, () -> Route.parse(value));
    }
}
