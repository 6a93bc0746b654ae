package io.sandgate.net;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Decides whether an outbound target may be contacted, and which address it must be contacted at.
 *
 * <p>{@link #check(String)} resolves the host once and refuses it if <em>any</em> address is not a
 * public unicast address (loopback, unspecified, link-local with the cloud metadata service,
 * private, carrier-grade NAT, multicast, broadcast, reserved), unless that address is inside an
 * allow-listed range. One bad address is enough: a client trying the addresses in turn would
 * reach it. IPv6 forms that carry an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) are
 * judged by the IPv4 address they deliver to.
 *
 * <p>The address returned is the one the caller must connect to. Connecting by name again would
 * resolve it again, and a DNS-rebinding name answers a public address to the check and a private
 * one to the connect.
 *
 * <p>Hosts that are numbers in a non-canonical form ({@code 2130706433}, {@code 0x7f.1},
 * {@code 127.1}) are refused rather than normalised: see {@link IpLiteral}.
 */
public final class SsrfGuard
{
    /** Host names as DNS carries them: labels of letters, digits, '-' and '_', an optional final dot. */
    private static final Pattern NAME = Pattern.compile("(?=.{1,254}$)([A-Za-z0-9_-]{1,63}\\.)*[A-Za-z0-9_-]{1,63}\\.?");

    private static final List<Range> IPV4 = List.of(
        new Range("0.0.0.0/8", Reason.UNSPECIFIED),
        new Range("127.0.0.0/8", Reason.LOOPBACK),
        new Range("169.254.0.0/16", Reason.LINK_LOCAL),
        new Range("10.0.0.0/8", Reason.PRIVATE),
        new Range("172.16.0.0/12", Reason.PRIVATE),
        new Range("192.168.0.0/16", Reason.PRIVATE),
        new Range("100.64.0.0/10", Reason.SHARED),
        new Range("224.0.0.0/4", Reason.MULTICAST),
        new Range("255.255.255.255/32", Reason.BROADCAST),
        new Range("240.0.0.0/4", Reason.RESERVED),
        // IETF protocol assignments, documentation, the old 6to4 relay anycast and benchmarking
        // (RFC 6890): never a real destination on the internet.
        new Range("192.0.0.0/24", Reason.RESERVED),
        new Range("192.0.2.0/24", Reason.RESERVED),
        new Range("192.88.99.0/24", Reason.RESERVED),
        new Range("198.18.0.0/15", Reason.RESERVED),
        new Range("198.51.100.0/24", Reason.RESERVED),
        new Range("203.0.113.0/24", Reason.RESERVED));

    private static final List<Range> IPV6 = List.of(
        new Range("::/128", Reason.UNSPECIFIED),
        new Range("::1/128", Reason.LOOPBACK),
        new Range("fe80::/10", Reason.LINK_LOCAL),
        // Site-local is deprecated (RFC 3879) but still routed inside some networks.
        new Range("fec0::/10", Reason.PRIVATE),
        new Range("fc00::/7", Reason.PRIVATE),
        new Range("ff00::/8", Reason.MULTICAST),
        // Local-use NAT64 (RFC 8215) translates into a network of the operator's choosing.
        new Range("64:ff9b:1::/48", Reason.PRIVATE),
        new Range("100::/64", Reason.RESERVED),
        new Range("2001:2::/48", Reason.RESERVED),
        new Range("2001:db8::/32", Reason.RESERVED));

    /** Everything outside global unicast is refused, so unassigned space needs no list of its own. */
    private static final Cidr GLOBAL_UNICAST = Cidr.parse("2000::/3");
    private static final Cidr NAT64 = Cidr.parse("64:ff9b::/96");
    private static final Cidr COMPATIBLE = Cidr.parse("::/96");
    private static final Cidr SIX_TO_FOUR = Cidr.parse("2002::/16");
    private static final Cidr TEREDO = Cidr.parse("2001::/32");

    private final List<Cidr> allowed;
    private final Resolver resolver;

    /**
     * @param allowed ranges that are contacted even though they are not public, such as an
     *        internal API network; empty for none
     * @param resolver how names are resolved, {@link Resolver#SYSTEM} outside tests
     */
    public SsrfGuard(List<Cidr> allowed, Resolver resolver)
    {
        this.allowed = List.copyOf(allowed);
        this.resolver = Objects.requireNonNull(resolver, "resolver");
    }

    /**
     * Resolves {@code host} (an IP literal, bracketed or not, is taken as is) and returns the address
     * to connect to: the first one, once every address has been accepted.
     *
     * @throws Refused when the host is malformed, does not resolve, or any of its addresses is not
     *         public and not allow-listed
     */
    public InetAddress check(String host)
    {
        Objects.requireNonNull(host, "host");
        Optional<InetAddress> literal = IpLiteral.parse(host);
        if (literal.isPresent())
        {
            InetAddress address = unmapped(literal.get());
            judge(host, address, true);
            return address;
        }
        if (IpLiteral.isNonCanonicalNumeric(host))
            throw new Refused(host, Reason.NON_CANONICAL, "target " + host + " is a numeric address in a non-canonical form");
        if (!NAME.matcher(host).matches())
            throw new Refused(host, Reason.MALFORMED, "target host is not a valid host name or IP address");
        List<InetAddress> addresses;
        try
        {
            addresses = resolver.resolve(host);
        }
        catch (UnknownHostException x)
        {
            addresses = List.of();
        }
        if (addresses == null || addresses.isEmpty())
            throw new Refused(host, Reason.UNRESOLVED, "target " + host + " does not resolve");
        List<InetAddress> accepted = new ArrayList<>(addresses.size());
        for (InetAddress address : addresses)
        {
            InetAddress plain = unmapped(address);
            judge(host, plain, false);
            accepted.add(plain);
        }
        return accepted.get(0);
    }

    private void judge(String host, InetAddress address, boolean literal)
    {
        for (Cidr range : allowed)
        {
            if (range.contains(address))
                return;
        }
        Verdict verdict = classify(address.getAddress());
        if (verdict == null)
            return;
        String message = "target " + host + (literal ? " is " : " resolves to ") + verdict.reason().phrase
            + (verdict.embedded() ? " (IPv4 embedded in IPv6)" : "");
        throw new Refused(host, verdict.reason(), message);
    }

    /** Why the address is not public, or null when it is. */
    private static Verdict classify(byte[] bytes)
    {
        if (bytes.length == 4)
        {
            Reason reason = lookUp(IPV4, bytes);
            return reason == null ? null : new Verdict(reason, false);
        }
        Reason exact = lookUp(IPV6.subList(0, 2), bytes);
        if (exact != null)
            return new Verdict(exact, false);
        InetAddress address = address(bytes);
        for (byte[] v4 : embedded(address, bytes))
        {
            Reason reason = lookUp(IPV4, v4);
            if (reason != null)
                return new Verdict(reason, true);
        }
        // NAT64 delivers to the public IPv4 address it carries; everything else must be listed or global.
        if (NAT64.contains(address))
            return null;
        Reason reason = lookUp(IPV6, bytes);
        if (reason != null)
            return new Verdict(reason, false);
        return GLOBAL_UNICAST.contains(address) ? null : new Verdict(Reason.RESERVED, false);
    }

    /**
     * The IPv4 addresses an IPv6 address delivers to: the last 32 bits for IPv4-compatible and NAT64,
     * bits 16-48 for 6to4, and for Teredo both the server (bits 32-64) and the client, whose address
     * is stored inverted in the last 32 bits (RFC 4380).
     */
    private static List<byte[]> embedded(InetAddress address, byte[] bytes)
    {
        if (COMPATIBLE.contains(address) || NAT64.contains(address))
            return List.of(Arrays.copyOfRange(bytes, 12, 16));
        if (SIX_TO_FOUR.contains(address))
            return List.of(Arrays.copyOfRange(bytes, 2, 6));
        if (TEREDO.contains(address))
        {
            byte[] client = Arrays.copyOfRange(bytes, 12, 16);
            for (int i = 0; i < client.length; i++)
                client[i] = (byte)~client[i];
            return List.of(Arrays.copyOfRange(bytes, 4, 8), client);
        }
        return List.of();
    }

    private static Reason lookUp(List<Range> ranges, byte[] bytes)
    {
        InetAddress address = address(bytes);
        for (Range range : ranges)
        {
            if (range.cidr().contains(address))
                return range.reason();
        }
        return null;
    }

    /**
     * An IPv4-mapped IPv6 address ({@code ::ffff:a.b.c.d}) is the IPv4 address on a dual-stack
     * socket. The JDK already parses the text form to IPv4, but a resolver may hand back an
     * {@link Inet6Address} with these bytes.
     */
    private static InetAddress unmapped(InetAddress address)
    {
        byte[] bytes = address.getAddress();
        if (!(address instanceof Inet6Address) || bytes.length != 16)
            return address;
        for (int i = 0; i < 10; i++)
        {
            if (bytes[i] != 0)
                return address;
        }
        if (bytes[10] != (byte)0xff || bytes[11] != (byte)0xff)
            return address;
        return address(Arrays.copyOfRange(bytes, 12, 16));
    }

    private static InetAddress address(byte[] bytes)
    {
        try
        {
            // Bytes only: no lookup, no host name attached.
            return InetAddress.getByAddress(bytes);
        }
        catch (UnknownHostException x)
        {
            throw new IllegalArgumentException("address of " + bytes.length + " bytes", x);
        }
    }

    /** Why a target was refused; the address categories name what the address is, never the address. */
    public enum Reason
    {
        LOOPBACK("a loopback address"),
        UNSPECIFIED("an unspecified address"),
        LINK_LOCAL("a link-local address"),
        PRIVATE("a private address"),
        SHARED("a shared (carrier-grade NAT) address"),
        MULTICAST("a multicast address"),
        BROADCAST("the broadcast address"),
        RESERVED("a reserved address"),
        NON_CANONICAL("a non-canonical numeric address"),
        MALFORMED("not a valid host"),
        UNRESOLVED("a name that does not resolve");

        private final String phrase;

        Reason(String phrase)
        {
            this.phrase = phrase;
        }
    }

    /**
     * The target may not be contacted. The message names the host as the caller wrote it and the
     * category of the address, never a resolved address: it may reach the agent in an error body,
     * and internal addresses must not.
     */
    public static final class Refused extends RuntimeException
    {
        private final String host;
        private final Reason reason;

        Refused(String host, Reason reason, String message)
        {
            // A policy decision, not a fault: no stack trace to fill or log.
            super(message, null, false, false);
            this.host = host;
            this.reason = reason;
        }

        public String host()
        {
            return host;
        }

        public Reason reason()
        {
            return reason;
        }
    }

    private record Range(Cidr cidr, Reason reason)
    {
        Range(String cidr, Reason reason)
        {
            this(Cidr.parse(cidr), reason);
        }
    }

    private record Verdict(Reason reason, boolean embedded)
    {
    }
}
