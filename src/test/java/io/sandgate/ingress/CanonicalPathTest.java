package io.sandgate.ingress;

import io.sandgate.web.GatewayException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The path resolution reads, held against the path the container routed on. The routed paths are
 * what Jetty's servlet path and path info give for each raw path (its default URI compliance
 * refuses some of these raw paths before any servlet sees them; Tomcat's does not).
 */
class CanonicalPathTest
{
    @ParameterizedTest(name = "{0} -> {2}")
    @CsvSource({
        "/vnc/1/../2/x,              /vnc/2/x,              /vnc/2/x",
        "/vnc/1/./x,                 /vnc/1/x,              /vnc/1/x",
        "/vnc/1/x/..,                /vnc/1/,               /vnc/1/",
        "/vnc/1;x/../2/y,            /vnc/2/y,              /vnc/2/y",
        "/vnc/37579/app/ui.js,       /vnc/37579/app/ui.js,  /vnc/37579/app/ui.js",
        "/vnc/1/a%20b,               /vnc/1/a b,            /vnc/1/a%20b",
        "/vnc/1/a%3Bb/x,             /vnc/1/a;b/x,          /vnc/1/a%3Bb/x",
        "/vnc/app/x.js;jsessionid=1, /vnc/app/x.js,         /vnc/app/x.js;jsessionid=1",
        "/sandgate/vnc/1/../2/,      /sandgate/vnc/2/,      /sandgate/vnc/2/",
    })
    void dotSegmentsGo_andThePercentEncodingStays(String raw, String routed, String canonical)
    {
        assertEquals(canonical, CanonicalPath.of(raw, routed));
    }

    /** Each raw path paired with what a container that decodes before normalising would route on. */
    @ParameterizedTest(name = "{0} routed as {1}")
    @CsvSource({
        "/vnc/1/%2e%2e/2/x,  /vnc/2/x",
        "/vnc/1/%2E%2e/2/x,  /vnc/2/x",
        "/vnc/1/.%2e/2/x,    /vnc/2/x",
        "/vnc/1/%2e/x,       /vnc/1/x",
        "/vnc/1%2f..%2f2/x,  /vnc/2/x",
        "/vnc/1/..;x/2/x,    /vnc/2/x",
        "/vnc/1//x,          /vnc/1/x",
    })
    void encodedDotsSlashesAndParameterisedDotSegments_areRefused(String raw, String routed)
    {
        assertEquals(400, assertThrows(GatewayException.class, () -> CanonicalPath.of(raw, routed)).status());
    }

    @Test
    void climbingAboveTheRoot_isRefused()
    {
        assertEquals(400, assertThrows(GatewayException.class, () -> CanonicalPath.of("/vnc/../../etc/passwd", "/etc/passwd")).status());
    }

    @Test
    void malformedEscapes_areRefused()
    {
        assertEquals(400, assertThrows(GatewayException.class, () -> CanonicalPath.of("/vnc/1/%ZZ", "/vnc/1/%ZZ")).status());
        assertEquals(400, assertThrows(GatewayException.class, () -> CanonicalPath.of("/vnc/1/%", "/vnc/1/%")).status());
    }
}
