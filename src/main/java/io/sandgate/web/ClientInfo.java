package io.sandgate.web;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
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

    public ClientInfo(List<Cidr> trustedProxies)
    {
        this.trustedProxies = List.copyOf(trustedProxies);
    }

    public boolean isTrusted(HttpServletRequest request)
    {
        if (trustedProxies.isEmpty())
            return false;
        try
        {
            return isTrusted(InetAddress.getByName(request.getRemoteAddr()));
        }
        catch (UnknownHostException x)
        {
            // getRemoteAddr() is a literal; nothing to resolve, nothing to trust.
            return false;
        }
    }

    private boolean isTrusted(InetAddress address)
    {
        for (Cidr cidr : trustedProxies)
        {
            if (cidr.contains(address))
                return true;
        }
        return false;
    }

    /**
     * The address of the client, as far as the gateway can trust it: the peer's, unless the peer is
     * a trusted proxy. Then {@code X-Forwarded-For} is read from the right, where each trusted proxy
     * appended the address it saw, up to the first address that is not a trusted proxy: whatever
     * stands further left the client wrote itself and could be anyone's. An entry that is not an
     * address ends the walk at the last trusted hop.
     */
    public String clientAddress(HttpServletRequest request)
    {
        String peer = request.getRemoteAddr();
        if (!isTrusted(request))
            return peer;
        List<String> hops = new ArrayList<>();
        for (Enumeration<String> headers = request.getHeaders(X_FORWARDED_FOR); headers != null && headers.hasMoreElements(); )
        {
            for (String hop : headers.nextElement().split(","))
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

    /** The scheme the client used: {@code https} behind a trusted TLS-terminating proxy. */
    public String scheme(HttpServletRequest request)
    {
        String forwarded = isTrusted(request) ? first(request.getHeader(X_FORWARDED_PROTO)) : null;
        return forwarded != null ? forwarded.toLowerCase(Locale.ROOT) : request.getScheme();
    }

    /** The Host the client used. */
    public String host(HttpServletRequest request)
    {
        String forwarded = isTrusted(request) ? first(request.getHeader(X_FORWARDED_HOST)) : null;
        if (forwarded != null)
            return forwarded;
        String host = request.getHeader("Host");
        return host != null ? host : request.getServerName() + ":" + request.getServerPort();
    }

    public String origin(HttpServletRequest request)
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
