package io.sandgate.ingress;

import java.util.List;
import java.util.Random;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Referer's path as {@link RefererPath} reads it: the plain form by its shortcut, the rest by
 * {@link java.net.URI}, and both to the same answer, since the id a Referer gives decides which
 * sandbox a request reaches.
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
    void aPlainReferer_ofTheOrigin_givesItsPath_withoutTheUri(String referer, String path)
    {
        assertTrue(RefererPath.plainPathEnd(referer, ORIGIN) >= 0, referer);
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

    /** Escapes and the like are the URI's to read, and still give the path they did. */
    @Test
    void anEscapedPath_isReadByTheUri()
    {
        String referer = ORIGIN + "/vnc/7/%61pp.js";
        assertEquals(-1, RefererPath.plainPathEnd(referer, ORIGIN));
        assertEquals("/vnc/7/%61pp.js", RefererPath.of(referer, ORIGIN));
    }

    /**
     * Random Referers, plain or not, of this origin or near it, read with the shortcut where it
     * applies and by the URI alone: the two agree on every one. Breaking any of the shortcut's
     * checks (the origin's end, its case, a character it takes, a second {@code #}) makes them differ.
     */
    @Test
    void randomReferers_readTheSameWithAndWithoutTheShortcut()
    {
        Random random = new Random(20261204);
        List<String> origins = List.of(ORIGIN, "https://gw.example.com", "http://127.0.0.1:18085", "http://localhost", "http://a-b.c:1",
            "https://GW.example.com:443", "http://gw.example.com:", "http://:80", "http://a:b:c", "http://a..b", "http://-a", "http://1.2.3.4.5",
            // Origins no plain Referer can have: the client's Host makes the origin.
            "http://a_b", "http://a b", "http://a%41", "http://[::1]:8080", "http://a@b", "http://ex\u00e9", "http://a\"b", "ftp://gw.example.com",
            // A trusted proxy's X-Forwarded-Host can put anything there.
            "http://gw.example.com/vnc", "http://gw?x", "http://gw#x");
        String pieces = "aZ09-_.!~*'();/?:@&=+$,#%[] \"<>\\^`{|}\u00e9\u0130\u212a\t";
        int plain = 0;
        for (int n = 0; n < 200_000; n++)
        {
            String origin = origins.get(random.nextInt(origins.size()));
            StringBuilder referer = new StringBuilder(random.nextInt(8) == 0 ? origins.get(random.nextInt(origins.size())) : origin);
            for (int i = 0; i < referer.length(); i++)
            {
                if (random.nextInt(6) == 0)
                    referer.setCharAt(i, random.nextBoolean() ? Character.toUpperCase(referer.charAt(i)) : pieces.charAt(random.nextInt(pieces.length())));
            }
            if (random.nextInt(10) != 0)
                referer.append("/vnc/7/");
            int extra = random.nextInt(12);
            for (int i = 0; i < extra; i++)
                referer.append(random.nextInt(3) == 0 ? pieces.charAt(random.nextInt(pieces.length())) : (char)('a' + random.nextInt(26)));
            String r = referer.toString();
            if (RefererPath.plainPathEnd(r, origin) >= 0)
                plain++;
            assertEquals(RefererPath.byUri(r, origin), RefererPath.of(r, origin), () -> r + " of " + origin);
        }
        // The shortcut is taken often enough for the comparison to mean something.
        assertTrue(plain > 5_000, "plain: " + plain);
    }
}
