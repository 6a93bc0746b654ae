package io.sandgate.net;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.Objects;

/**
 * An address range such as {@code 10.0.0.0/8} or {@code fc00::/7}; a bare address is a range of one.
 *
 * @param network the network address, host bits cleared
 * @param prefixLength number of leading bits that must match
 */
public record Cidr(InetAddress network, int prefixLength)
{
    public Cidr
    {
        Objects.requireNonNull(network, "network");
        int bits = network.getAddress().length * 8;
        if (prefixLength < 0 || prefixLength > bits)
            throw new IllegalArgumentException("prefix length: " + prefixLength + " (expected: 0 to " + bits + ")");
    }

    /**
     * Parses {@code address/prefix}. Only literal addresses are accepted: a host name here would
     * make a DNS lookup part of a security decision.
     */
    public static Cidr parse(String text)
    {
        String value = text.trim();
        int slash = value.indexOf('/');
        String address = slash < 0 ? value : value.substring(0, slash);
        // Strict literals only: InetAddress would look a hex-only name such as "cafe.be" up in DNS,
        // and would read "10.1" as 10.0.0.1.
        boolean ipv4 = address.matches("((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)");
        boolean ipv6 = address.contains(":") && address.matches("[0-9a-fA-F:.]+");
        String prefixText = slash < 0 ? null : value.substring(slash + 1);
        if ((!ipv4 && !ipv6) || (prefixText != null && !prefixText.matches("\\d{1,3}")))
            throw new IllegalArgumentException("CIDR: " + text + " (expected: an IP literal with an optional /prefix)");
        try
        {
            InetAddress network = InetAddress.getByName(address);
            int bits = network.getAddress().length * 8;
            int prefix = prefixText == null ? bits : Integer.parseInt(prefixText);
            return new Cidr(mask(network.getAddress(), prefix), prefix);
        }
        catch (UnknownHostException | NumberFormatException x)
        {
            throw new IllegalArgumentException("CIDR: " + text + " (expected: an IP literal with an optional /prefix)");
        }
    }

    /** The network of {@code prefixLength} leading bits that {@code address} is in. */
    public static Cidr of(InetAddress address, int prefixLength)
    {
        return new Cidr(mask(address.getAddress(), prefixLength), prefixLength);
    }

    public boolean contains(InetAddress address)
    {
        byte[] candidate = address.getAddress();
        if (candidate.length != network.getAddress().length)
            return false;
        return Arrays.equals(mask(candidate, prefixLength).getAddress(), network.getAddress());
    }

    private static InetAddress mask(byte[] bytes, int prefix)
    {
        byte[] masked = bytes.clone();
        for (int i = 0; i < masked.length; i++)
        {
            int keep = Math.max(0, Math.min(8, prefix - i * 8));
            masked[i] &= (byte)(0xFF << (8 - keep));
        }
        try
        {
            return InetAddress.getByAddress(masked);
        }
        catch (UnknownHostException x)
        {
            throw new IllegalStateException(x);
        }
    }

    @Override
    public String toString()
    {
        return network.getHostAddress() + "/" + prefixLength;
    }
}
