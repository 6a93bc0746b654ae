package io.sandgate.web;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

import io.sandgate.net.Cidr;
import io.sandgate.net.IpLiteral;
import jakarta.servlet.http.HttpServletRequest;

/**
 * Who the client is and how it reached us, believing {@code X-Forwarded-*} only from a trusted
 * proxy: anyone else could claim to be HTTPS, or another address, to get a Secure cookie or to
 * poison a sandbox's logs.
 */
public final class ClientInfo
{
    public static final String X_FORWARDED_FOR = "X-Forwarded-For";
    public static final String X_FORWARDED_PROTO = "X-Forwarded-Proto";
    public static final String X_FORWARDED_HOST = "X-Forwarded-Host";
    public static final String X_FORWARDED_PORT = "X-Forwarded-Port";
    public static final String X_FORWARDED_PREFIX = "X-Forwarded-Prefix";
    public static final String FORWARDED = "Forwarded";
    /** Headers a client might use to forge its origin; dropped unless the peer is trusted. */
    public static final List<String> FORWARDING_HEADERS = List.of(X_FORWARDED_FOR, X_FORWARDED_PROTO, X_FORWARDED_HOST,
        X_FORWARDED_PORT, X_FORWARDED_PREFIX, FORWARDED, "X-Real-IP");

    private final List<Cidr> trustedProxies;
    /** How many leading bits of an IPv6 client's address a per-client limit counts it by. */
    private final int ipv6Prefix;

    /** Counting an IPv6 client by its /64, the default of {@code server.client-ipv6-prefix}. */
    public ClientInfo(List<Cidr> trustedProxies)
    {
        this(trustedProxies, 64);
    }

    public ClientInfo(List<Cidr> trustedProxies, int ipv6Prefix)
    {
        if (ipv6Prefix < 0 || ipv6Prefix > 128)
            throw new IllegalArgumentException("ipv6Prefix: " + ipv6Prefix);
        this.trustedProxies = List.copyOf(trustedProxies);
        this.ipv6Prefix = ipv6Prefix;
    }

    /**
     * What this class reads of a request, from whichever API carries it: the servlet API (the WAR,
     * and the embedded runner's servlets) or Jetty's core API (its ingress handler).
     */
    public interface RequestView
    {
        /** The peer's address, a literal. */
        String remoteAddr();

        /** The scheme the peer used towards the gateway. */
        String scheme();

        /** The first value of a header, or null. */
        String header(String name);

        /** Every value of a header, in order. */
        List<String> headers(String name);

        /** {@code host:port} of the listener, for a request without {@code Host}. */
        String serverAuthority();
    }

    /** A servlet request as this class reads it. */
    public static RequestView view(HttpServletRequest request)
    {
        return new RequestView()
        {
            @Override
            public String remoteAddr()
            {
                return request.getRemoteAddr();
            }

            @Override
            public String scheme()
            {
                return request.getScheme();
            }

            @Override
            public String header(String name)
            {
                return request.getHeader(name);
            }

            @Override
            public List<String> headers(String name)
            {
                Enumeration<String> values = request.getHeaders(name);
                return values == null ? List.of() : Collections.list(values);
            }

            @Override
            public String serverAuthority()
            {
                return request.getServerName() + ":" + request.getServerPort();
            }
        };
    }

    public boolean isTrusted(HttpServletRequest request)
    {
        return isTrustedPeer(view(request));
    }

    /**
     * Whether the request's peer is a trusted proxy. The peer's address is not asked for when no
     * proxy is trusted: a servlet container writes it out as text anew on every call.
     */
    private boolean isTrustedPeer(RequestView request)
    {
        return !trustedProxies.isEmpty() && isTrusted(request.remoteAddr());
    }

    /** @param remoteAddr the peer's address, a literal */
    public boolean isTrusted(String remoteAddr)
    {
        if (trustedProxies.isEmpty())
            return false;
        try
        {
            return isTrusted(InetAddress.getByName(remoteAddr));
        }
        catch (UnknownHostException x)
        {
            // A remote address is a literal; nothing to resolve, nothing to trust.
            return false;
        }
    }

    /** Whether a peer is a trusted proxy, by its address. */
    public boolean isTrusted(InetAddress address)
    {
        for (Cidr cidr : trustedProxies)
        {
            if (cidr.contains(address))
                return true;
        }
        return false;
    }

    public String clientAddress(HttpServletRequest request)
    {
        return clientAddress(view(request));
    }

    /**
     * The address of the client, as far as the gateway can trust it: the peer's, unless the peer is
     * a trusted proxy. Then {@code X-Forwarded-For} is read from the right, where each trusted proxy
     * appended the address it saw, up to the first address that is not a trusted proxy: whatever
     * stands further left the client wrote itself and could be anyone's. An entry that is not an
     * address ends the walk at the last trusted hop.
     */
    public String clientAddress(RequestView request)
    {
        String peer = request.remoteAddr();
        if (!isTrusted(peer))
            return peer;
        List<String> hops = new ArrayList<>();
        for (String header : request.headers(X_FORWARDED_FOR))
        {
            for (String hop : header.split(","))
                hops.add(hop.trim());
        }
        String client = peer;
        for (int i = hops.size() - 1; i >= 0; i--)
        {
            Optional<InetAddress> hop = IpLiteral.parse(hops.get(i));
            if (hop.isEmpty())
                return client;
            client = hop.get().getHostAddress();
            if (!isTrusted(hop.get()))
                return client;
        }
        return client;
    }

    /**
     * What a per-client limit counts a client under: its address, and an IPv6 one by its network
     * ({@code server.client-ipv6-prefix}, a /64 by default). A host is given a whole /64 and can take
     * a new address from it for every connection or request, so counting IPv6 addresses one by one
     * would let one host pass for billions of clients.
     *
     * @param address an address as {@link #clientAddress} gives it; anything else is its own key
     */
    public String limitKey(String address)
    {
        if (address.indexOf(':') < 0)
            return address;
        return IpLiteral.parse(address).map(this::limitKey).orElse(address);
    }

    /** As {@link #limitKey(String)}, for a parsed address. */
    public String limitKey(InetAddress address)
    {
        if (!(address instanceof Inet6Address))
            return address.getHostAddress();
        // The network address is made from the bytes alone: a scope, if any, is no part of the key.
        return Cidr.of(address, ipv6Prefix).toString();
    }

    public String scheme(HttpServletRequest request)
    {
        return scheme(view(request));
    }

    /** The scheme the client used: {@code https} behind a trusted TLS-terminating proxy. */
    public String scheme(RequestView request)
    {
        String forwarded = isTrustedPeer(request) ? first(request.header(X_FORWARDED_PROTO)) : null;
        return forwarded != null ? forwarded.toLowerCase(Locale.ROOT) : request.scheme();
    }

    public String host(HttpServletRequest request)
    {
        return host(view(request));
    }

    /** The Host the client used. */
    public String host(RequestView request)
    {
        String forwarded = isTrustedPeer(request) ? first(request.header(X_FORWARDED_HOST)) : null;
        if (forwarded != null)
            return forwarded;
        String host = request.header("Host");
        return host != null ? host : request.serverAuthority();
    }

    public String origin(HttpServletRequest request)
    {
        return origin(view(request));
    }

    public String origin(RequestView request)
    {
        return scheme(request) + "://" + host(request);
    }

    private static String first(String header)
    {
        if (header == null)
            return null;
        int comma = header.indexOf(',');
        String value = (comma < 0 ? header : header.substring(0, comma)).trim();
        return value.isEmpty() ? null : value;
    }
}
