package io.sandgate.ingress;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The Referer's path as {@link RefererPath} reads it: only from a Referer of the gateway's own
 * origin, since the id a Referer gives decides which sandbox a request reaches.
 */
class RefererPathTest
{
    private static final String ORIGIN = "http://gw.example.com:8080";

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "http://gw.example.com:8080/vnc/7/vnc.html | /vnc/7/vnc.html",
        "HTTP://GW.Example.COM:8080/vnc/7/ | /vnc/7/",
        "http://gw.example.com:8080/vnc/7/vnc.html?autoconnect=true&path=vnc/7/websockify | /vnc/7/vnc.html",
        "http://gw.example.com:8080/vnc/7/app/ui.js#top | /vnc/7/app/ui.js",
        "http://gw.example.com:8080/vnc/7/a/../b?x=/y#z?w | /vnc/7/a/../b",
    })
    void aReferer_ofTheOrigin_givesItsPath(String referer, String path)
    {
        assertEquals(path, RefererPath.of(referer, ORIGIN));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        // Another origin: a port, a host, a scheme, a host that starts with this one.
        "http://gw.example.com:8081/vnc/7/",
        "http://gw.example.com/vnc/7/",
        "https://gw.example.com:8080/vnc/7/",
        "http://gw.example.com:80800/vnc/7/",
        "http://gw.example.com:8080.evil.test/vnc/7/",
        "http://gw.example.com:8080@evil.test/vnc/7/",
        // Not a URI at all.
        "http://gw.example.com:8080/vnc/7/a b",
        "http://gw.example.com:8080/vnc/7/#a#b",
        "http://gw.example.com:8080/vnc/7/%zz",
        "/vnc/7/",
    })
    void anythingElse_givesNoPath(String referer)
    {
        assertNull(RefererPath.of(referer, ORIGIN), referer);
    }

    /** Escapes stay as they were sent: the path is raw. */
    @Test
    void anEscapedPath_staysRaw()
    {
        String referer = ORIGIN + "/vnc/7/%61pp.js";
        assertEquals("/vnc/7/%61pp.js", RefererPath.of(referer, ORIGIN));
    }
}
