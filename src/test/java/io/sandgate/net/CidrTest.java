package io.sandgate.net;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CidrTest
{
    /** Literal addresses only: getByName does no lookup for these. */
    private static InetAddress ip(String literal)
    {
        try
        {
            return InetAddress.getByName(literal);
        }
        catch (UnknownHostException x)
        {
            throw new AssertionError(x);
        }
    }

    private static void assertIn(Cidr cidr, String... addresses)
    {
        for (String a : addresses)
            assertTrue(cidr.contains(ip(a)), () -> cidr + " should contain " + a);
    }

    private static void assertNotIn(Cidr cidr, String... addresses)
    {
        for (String a : addresses)
            assertFalse(cidr.contains(ip(a)), () -> cidr + " should not contain " + a);
    }

    // ---------------------------------------------------------------- IPv4

    @Test
    void ipv4Range()
    {
        Cidr cidr = Cidr.parse("10.0.0.0/8");
        assertEquals(8, cidr.prefixLength());
        assertEquals(ip("10.0.0.0"), cidr.network());
        assertIn(cidr, "10.0.0.0", "10.1.2.3", "10.255.255.255");
        assertNotIn(cidr, "9.255.255.255", "11.0.0.0", "110.0.0.1", "192.168.1.1");
    }

    @Test
    void ipv4RangeNotOnAByteBoundary()
    {
        Cidr cidr = Cidr.parse("172.16.0.0/12");
        assertIn(cidr, "172.16.0.0", "172.20.1.1", "172.31.255.255");
        assertNotIn(cidr, "172.15.255.255", "172.32.0.0", "172.48.0.1");

        Cidr narrow = Cidr.parse("192.168.1.64/27");
        assertIn(narrow, "192.168.1.64", "192.168.1.95");
        assertNotIn(narrow, "192.168.1.63", "192.168.1.96", "192.168.2.64");
    }

    @Test
    void hostBitsAreCleared()
    {
        Cidr cidr = Cidr.parse("192.168.1.77/24");
        assertEquals(ip("192.168.1.0"), cidr.network());
        assertEquals("192.168.1.0/24", cidr.toString());
        assertEquals(Cidr.parse("192.168.1.0/24"), cidr);
        assertIn(cidr, "192.168.1.1", "192.168.1.255");
        assertNotIn(cidr, "192.168.0.255", "192.168.2.0");

        assertEquals(ip("10.0.16.0"), Cidr.parse("10.0.31.200/20").network());
    }

    @Test
    void surroundingWhitespaceIgnored()
    {
        assertEquals(Cidr.parse("10.0.0.0/8"), Cidr.parse("  10.0.0.0/8 \t"));
    }

    @Test
    void ipv4SingleHostPrefix()
    {
        Cidr cidr = Cidr.parse("203.0.113.9/32");
        assertIn(cidr, "203.0.113.9");
        assertNotIn(cidr, "203.0.113.8", "203.0.113.10");
    }

    // ---------------------------------------------------------------- IPv6

    @Test
    void ipv6Range()
    {
        Cidr ula = Cidr.parse("fc00::/7");
        assertEquals(7, ula.prefixLength());
        assertTrue(ula.network() instanceof Inet6Address);
        assertIn(ula, "fc00::", "fd12:3456::1", "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
        assertNotIn(ula, "fe80::1", "fbff:ffff::1", "::1", "2001:db8::1");

        Cidr doc = Cidr.parse("2001:DB8::/32");
        assertIn(doc, "2001:db8::", "2001:db8:ffff:ffff::1");
        assertNotIn(doc, "2001:db9::", "2001:db7:ffff::1");
    }

    @Test
    void ipv6RangeNotOnAByteBoundaryAndHostBitsCleared()
    {
        Cidr cidr = Cidr.parse("2001:db8:abcd:1234::5/52");
        assertEquals(ip("2001:db8:abcd:1000::"), cidr.network());
        assertIn(cidr, "2001:db8:abcd:1000::", "2001:db8:abcd:1fff:ffff:ffff:ffff:ffff");
        assertNotIn(cidr, "2001:db8:abcd:0fff::1", "2001:db8:abcd:2000::");
    }

    @Test
    void ipv6SingleHostPrefix()
    {
        Cidr cidr = Cidr.parse("2001:db8::1/128");
        assertIn(cidr, "2001:db8::1", "2001:db8:0:0:0:0:0:1");
        assertNotIn(cidr, "2001:db8::2", "2001:db8::");
    }

    // ---------------------------------------------------------------- bare address

    @Test
    void bareIpv4AddressIsARangeOfOne()
    {
        Cidr cidr = Cidr.parse("192.0.2.5");
        assertEquals(32, cidr.prefixLength());
        assertEquals("192.0.2.5/32", cidr.toString());
        assertIn(cidr, "192.0.2.5");
        assertNotIn(cidr, "192.0.2.4", "192.0.2.6", "192.0.3.5");
    }

    @Test
    void bareIpv6AddressIsARangeOfOne()
    {
        Cidr cidr = Cidr.parse("::1");
        assertEquals(128, cidr.prefixLength());
        assertIn(cidr, "::1", "0:0:0:0:0:0:0:1");
        assertNotIn(cidr, "::2", "::", "127.0.0.1");
    }

    // ---------------------------------------------------------------- prefix 0

    @Test
    void ipv4PrefixZeroContainsEveryIpv4Address()
    {
        Cidr all = Cidr.parse("0.0.0.0/0");
        assertEquals(0, all.prefixLength());
        assertIn(all, "0.0.0.0", "1.2.3.4", "127.0.0.1", "255.255.255.255");
        assertNotIn(all, "::1", "2001:db8::1", "::");
        // Any network address is cleared down to 0.0.0.0.
        assertEquals(all, Cidr.parse("10.1.2.3/0"));
    }

    @Test
    void ipv6PrefixZeroContainsEveryIpv6Address()
    {
        Cidr all = Cidr.parse("::/0");
        assertEquals(0, all.prefixLength());
        assertIn(all, "::", "::1", "fe80::1", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
        assertNotIn(all, "0.0.0.0", "10.0.0.1");
    }

    // ---------------------------------------------------------------- families

    @Test
    void familiesNeverMatchEachOther()
    {
        Cidr v4 = Cidr.parse("127.0.0.0/8");
        Cidr v6 = Cidr.parse("::/1");
        assertTrue(v4.network() instanceof Inet4Address);
        assertTrue(v6.network() instanceof Inet6Address);
        assertNotIn(v4, "::1", "::7f00:1");
        assertNotIn(v6, "0.0.0.1", "127.0.0.1");
        assertNotEquals(Cidr.parse("0.0.0.0/0"), Cidr.parse("::/0"));
    }

    // ---------------------------------------------------------------- rejections

    @ParameterizedTest
    @ValueSource(strings = {"localhost", "localhost/8", "example.com", "proxy.example.com/24", "my-proxy", "router.local/32",
        "ingress-nginx.kube-system.svc", "fe80::1%eth0", "[::1]", "[::1]/128"})
    void hostNamesAndNonLiteralsRejected(String text)
    {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, () -> Cidr.parse(text));
        assertTrue(x.getMessage().contains(text), x.getMessage());
        assertTrue(x.getMessage().contains("IP literal"), x.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", " ", "/8", "1234", "ffff"})
    void emptyOrShapelessTextRejected(String text)
    {
        assertThrows(IllegalArgumentException.class, () -> Cidr.parse(text));
    }

    @ParameterizedTest
    @ValueSource(strings = {"10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/", "10.0.0.0/abc", "10.0.0.0/8/8", "10.0.0.0/ 8x",
        "::/129", "2001:db8::/200", "::/-0x1"})
    void badPrefixesRejected(String text)
    {
        assertThrows(IllegalArgumentException.class, () -> Cidr.parse(text));
    }

    @Test
    void prefixLengthMessageNamesTheBound()
    {
        IllegalArgumentException v4 = assertThrows(IllegalArgumentException.class, () -> Cidr.parse("10.0.0.0/33"));
        assertTrue(v4.getMessage().contains("33") && v4.getMessage().contains("0 to 32"), v4.getMessage());
        IllegalArgumentException v6 = assertThrows(IllegalArgumentException.class, () -> Cidr.parse("::/129"));
        assertTrue(v6.getMessage().contains("129") && v6.getMessage().contains("0 to 128"), v6.getMessage());
    }

    @Test
    void constructorValidatesPrefixLength()
    {
        assertThrows(IllegalArgumentException.class, () -> new Cidr(ip("10.0.0.0"), 33));
        assertThrows(IllegalArgumentException.class, () -> new Cidr(ip("10.0.0.0"), -1));
        assertThrows(IllegalArgumentException.class, () -> new Cidr(ip("::"), 129));
        assertThrows(NullPointerException.class, () -> new Cidr(null, 8));
        assertEquals(128, new Cidr(ip("::"), 128).prefixLength());
    }
}
