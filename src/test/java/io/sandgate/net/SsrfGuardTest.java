package io.sandgate.net;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SsrfGuardTest
{
    private static final String PUBLIC_V4 = "93.184.216.34";
    private static final String PUBLIC_V6 = "2606:2800:220:1:248:1893:25c8:1946";

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

    /** A resolver that knows only the given names; any other name does not resolve. */
    private static Resolver names(Map<String, List<String>> table)
    {
        return host ->
        {
            List<String> answer = table.get(host);
            if (answer == null)
                throw new UnknownHostException(host);
            List<InetAddress> addresses = new ArrayList<>();
            for (String literal : answer)
                addresses.add(ip(literal));
            return addresses;
        };
    }

    private static final Resolver NO_DNS = host ->
    {
        throw new AssertionError("no lookup expected for " + host);
    };

    private static SsrfGuard guard(Resolver resolver, String... allowed)
    {
        List<Cidr> ranges = new ArrayList<>();
        for (String cidr : allowed)
            ranges.add(Cidr.parse(cidr));
        return new SsrfGuard(ranges, resolver);
    }

    private static SsrfGuard.Refused refused(SsrfGuard guard, String host)
    {
        return assertThrows(SsrfGuard.Refused.class, () -> guard.check(host), () -> host + " should be refused");
    }

    // ---------------------------------------------------------------- literals

    @ParameterizedTest
    @CsvSource({
        "127.0.0.1, LOOPBACK",
        "127.255.0.9, LOOPBACK",
        "169.254.169.254, LINK_LOCAL",
        "10.0.0.1, PRIVATE",
        "172.16.5.4, PRIVATE",
        "172.31.255.255, PRIVATE",
        "192.168.1.1, PRIVATE",
        "100.64.0.1, SHARED",
        "100.127.255.254, SHARED",
        "0.0.0.0, UNSPECIFIED",
        "0.1.2.3, UNSPECIFIED",
        "224.0.0.1, MULTICAST",
        "239.255.255.250, MULTICAST",
        "255.255.255.255, BROADCAST",
        "240.0.0.1, RESERVED",
        "192.0.2.10, RESERVED",
        "198.18.0.1, RESERVED",
        "[::1], LOOPBACK",
        "::1, LOOPBACK",
        "[::], UNSPECIFIED",
        "[::ffff:127.0.0.1], LOOPBACK",
        "[::ffff:a9fe:a9fe], LINK_LOCAL",
        "[::ffff:10.1.2.3], PRIVATE",
        "[fd00::1], PRIVATE",
        "[fc00::1], PRIVATE",
        "[fec0::1], PRIVATE",
        "[fe80::1], LINK_LOCAL",
        "[febf::1], LINK_LOCAL",
        "[ff02::1], MULTICAST",
        "[64:ff9b::7f00:1], LOOPBACK",
        "[64:ff9b::a9fe:a9fe], LINK_LOCAL",
        "[64:ff9b:1::8.8.8.8], PRIVATE",
        "[::7f00:1], LOOPBACK",
        "[::808:808], RESERVED",
        "[2002:7f00:1::1], LOOPBACK",
        "[2002:c0a8:101::1], PRIVATE",
        "[2001:0:4136:e378:8000:63bf:80ff:fffe], LOOPBACK",
        "[2001:0:a00:1::1], PRIVATE",
        "[2001:db8::1], RESERVED",
        "[100::1], RESERVED",
        "[4000::1], RESERVED",
    })
    void nonPublicLiterals_areRefused_withTheirCategory(String host, SsrfGuard.Reason reason)
    {
        SsrfGuard.Refused x = refused(guard(NO_DNS), host);
        assertEquals(reason, x.reason(), x.getMessage());
        assertEquals(host, x.host());
        assertTrue(x.getMessage().startsWith("target " + host + " is "), x.getMessage());
    }

    @Test
    void mappedLoopback_isParsedAsIpv4_andStillRefused()
    {
        // The JDK turns the mapped form into an Inet4Address: the check must not rely on seeing IPv6.
        assertTrue(ip("::ffff:127.0.0.1") instanceof Inet4Address);
        assertEquals(SsrfGuard.Reason.LOOPBACK, refused(guard(NO_DNS), "[::ffff:127.0.0.1]").reason());
    }

    @Test
    void mappedAddressFromAResolver_isJudgedAsItsIpv4Address() throws Exception
    {
        byte[] mapped = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte)0xff, (byte)0xff, (byte)169, (byte)254, (byte)169, (byte)254};
        Inet6Address metadata = Inet6Address.getByAddress(null, mapped, -1);
        SsrfGuard.Refused x = refused(guard(host -> List.of(metadata)), "metadata.test");
        assertEquals(SsrfGuard.Reason.LINK_LOCAL, x.reason());
    }

    @ParameterizedTest
    @ValueSource(strings = {"2130706433", "0x7f000001", "0x7f.1", "127.1", "127.0.1", "0177.0.0.1", "017700000001", "127.0.0.1.",
        "1.2.3.4.5", "0x7f.0x0.0x0.0x1", "example.0x1", "10.0.0.010", "00127.0.0.1", "1e2.0.0.1.2"})
    void nonCanonicalNumericHosts_areRefused_withoutALookup(String host)
    {
        SsrfGuard.Refused x = refused(guard(NO_DNS, "0.0.0.0/0"), host);
        assertTrue(x.reason() == SsrfGuard.Reason.NON_CANONICAL || x.reason() == SsrfGuard.Reason.MALFORMED, x.getMessage());
    }

    @Test
    void decimalFormOfLoopback_isRefusedAsNonCanonical()
    {
        SsrfGuard.Refused x = refused(guard(NO_DNS), "2130706433");
        assertEquals(SsrfGuard.Reason.NON_CANONICAL, x.reason());
        assertEquals("target 2130706433 is a numeric address in a non-canonical form", x.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "[::1", "[127.0.0.1]", "fe80::1%eth0", "[fe80::1%25eth0]", "a b", "exa mple.com", "host/path",
        "user@host", "..", "a..b", ".example.com", "[]", "::g"})
    void malformedHosts_areRefused_withoutALookup(String host)
    {
        SsrfGuard.Refused x = refused(guard(NO_DNS), host);
        assertEquals(SsrfGuard.Reason.MALFORMED, x.reason(), x.getMessage());
    }

    @ParameterizedTest
    @ValueSource(strings = {PUBLIC_V4, "8.8.8.8", "1.1.1.1", "[" + PUBLIC_V6 + "]", PUBLIC_V6, "[64:ff9b::808:808]",
        "[2002:808:808::1]", "172.32.0.1", "100.128.0.1", "11.0.0.1"})
    void publicLiterals_areAccepted_asTheAddressTheyName(String host)
    {
        InetAddress expected = ip(host.replace("[", "").replace("]", ""));
        assertEquals(expected, guard(NO_DNS).check(host));
    }

    // ---------------------------------------------------------------- names

    @Test
    void nameResolvingToLoopback_isRefused_withoutNamingTheAddress()
    {
        SsrfGuard guard = guard(names(Map.of("evil.example", List.of("127.0.0.1"))));
        SsrfGuard.Refused x = refused(guard, "evil.example");
        assertEquals(SsrfGuard.Reason.LOOPBACK, x.reason());
        assertEquals("target evil.example resolves to a loopback address", x.getMessage());
    }

    @Test
    void nameWithOnePublicAndOnePrivateAddress_isRefused_whicheverComesFirst()
    {
        SsrfGuard publicFirst = guard(names(Map.of("split.example", List.of(PUBLIC_V4, "10.1.2.3"))));
        SsrfGuard privateFirst = guard(names(Map.of("split.example", List.of("10.1.2.3", PUBLIC_V4))));
        assertEquals(SsrfGuard.Reason.PRIVATE, refused(publicFirst, "split.example").reason());
        assertEquals(SsrfGuard.Reason.PRIVATE, refused(privateFirst, "split.example").reason());
    }

    @Test
    void nameResolvingToMetadataOverIpv6_isRefused()
    {
        SsrfGuard guard = guard(names(Map.of("meta.example", List.of(PUBLIC_V6, "64:ff9b::a9fe:a9fe"))));
        SsrfGuard.Refused x = refused(guard, "meta.example");
        assertEquals(SsrfGuard.Reason.LINK_LOCAL, x.reason());
        assertEquals("target meta.example resolves to a link-local address (IPv4 embedded in IPv6)", x.getMessage());
    }

    @Test
    void refusalMessages_neverContainTheResolvedAddress()
    {
        Map<String, List<String>> table = Map.of(
            "a.example", List.of("10.11.12.13"),
            "b.example", List.of("169.254.169.254"),
            "c.example", List.of("fd12:3456:789a::1"),
            "d.example", List.of(PUBLIC_V4, "192.168.77.66"));
        SsrfGuard guard = guard(names(table));
        for (Map.Entry<String, List<String>> entry : table.entrySet())
        {
            String message = refused(guard, entry.getKey()).getMessage();
            assertTrue(message.contains(entry.getKey()), message);
            for (String address : entry.getValue())
            {
                assertFalse(message.contains(address), message);
                assertFalse(message.contains(ip(address).getHostAddress()), message);
            }
        }
    }

    @Test
    void nameThatDoesNotResolve_isRefusedClearly()
    {
        SsrfGuard.Refused unknown = refused(guard(names(Map.of())), "nowhere.example");
        assertEquals(SsrfGuard.Reason.UNRESOLVED, unknown.reason());
        assertEquals("target nowhere.example does not resolve", unknown.getMessage());

        SsrfGuard.Refused empty = refused(guard(host -> List.of()), "empty.example");
        assertEquals(SsrfGuard.Reason.UNRESOLVED, empty.reason());
    }

    @Test
    void publicName_returnsTheFirstAddress()
    {
        SsrfGuard guard = guard(names(Map.of("api.example.com", List.of(PUBLIC_V4, PUBLIC_V6))));
        assertEquals(ip(PUBLIC_V4), guard.check("api.example.com"));
    }

    @Test
    void allowListedPrivateRange_isAccepted_butOnlyThatRange()
    {
        SsrfGuard guard = guard(names(Map.of(
            "internal.example", List.of("10.20.0.5"),
            "mixed.example", List.of("10.20.0.5", "10.30.0.5"),
            "localhost", List.of("127.0.0.1", "::1"))), "10.20.0.0/16", "127.0.0.0/8");
        assertEquals(ip("10.20.0.5"), guard.check("internal.example"));
        assertEquals(ip("10.20.0.9"), guard.check("10.20.0.9"));
        assertEquals(ip("127.0.0.1"), guard.check("127.0.0.1"));
        assertEquals(SsrfGuard.Reason.PRIVATE, refused(guard, "mixed.example").reason());
        assertEquals(SsrfGuard.Reason.PRIVATE, refused(guard, "10.21.0.1").reason());
        // ::1 is not in 127.0.0.0/8: allowing IPv4 loopback does not allow IPv6 loopback.
        assertEquals(SsrfGuard.Reason.LOOPBACK, refused(guard, "localhost").reason());
    }

    @Test
    void rebindingName_isResolvedOnce_andTheCheckedAddressIsReturned()
    {
        AtomicInteger lookups = new AtomicInteger();
        Resolver rebinding = host -> List.of(ip(lookups.getAndIncrement() == 0 ? PUBLIC_V4 : "127.0.0.1"));
        InetAddress checked = guard(rebinding).check("rebind.example");
        assertEquals(ip(PUBLIC_V4), checked);
        assertEquals(1, lookups.get(), "the address to connect to comes from the one lookup that was checked");
    }
}
