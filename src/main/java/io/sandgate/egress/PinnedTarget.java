package io.sandgate.egress;

import java.net.InetAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Objects;

import io.sandgate.net.IpLiteral;
import io.sandgate.net.SsrfGuard;

/**
 * An egress target whose address has been checked: requests go to {@code address}, never to
 * {@code name}, so the egress node cannot resolve the name again and reach another address (DNS
 * rebinding). The name is still what the target is to TLS (SNI and certificate verification) and
 * to HTTP ({@code Host}).
 *
 * <p>Used as the tag of a Jetty request (see {@link PinnedHttpClient}): the tag is part of the
 * destination key, so connections, and the TLS sessions on them, are pooled per name and address.
 *
 * @param scheme {@code http} or {@code https}
 * @param name the host as the agent named it, lower case, IPv6 literals without brackets
 * @param address the address the SSRF guard accepted for {@code name}
 * @param port the target port
 */
public record PinnedTarget(String scheme, String name, InetAddress address, int port)
{
    public PinnedTarget
    {
        Objects.requireNonNull(scheme, "scheme");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(address, "address");
        scheme = scheme.toLowerCase(Locale.ROOT);
        if (!scheme.equals("http") && !scheme.equals("https"))
            throw new IllegalArgumentException("scheme: " + scheme + " (expected: http or https)");
        if (name.startsWith("[") && name.endsWith("]"))
            name = name.substring(1, name.length() - 1);
        name = name.toLowerCase(Locale.ROOT);
        if (name.isEmpty())
            throw new IllegalArgumentException("name: empty (expected: a host name or IP literal)");
        if (port < 1 || port > 65535)
            throw new IllegalArgumentException("port: " + port + " (expected: 1 to 65535)");
    }

    /**
     * Checks {@code host} with the guard and pins it to the address the guard accepted.
     *
     * @param port the target port, or -1 for the scheme's default
     * @throws SsrfGuard.Refused when the guard refuses the host
     */
    public static PinnedTarget check(SsrfGuard guard, String scheme, String host, int port)
    {
        InetAddress address = guard.check(host);
        int effective = port > 0 ? port : defaultPort(scheme);
        return new PinnedTarget(scheme, host, address, effective);
    }

    /** {@code <address>:<port>}, IPv6 in brackets: the CONNECT target and the authority the node sees. */
    public String authority()
    {
        return IpLiteral.format(address) + ":" + port;
    }

    /** The {@code Host} header: the name, with the port unless it is the scheme's default. */
    public String hostHeader()
    {
        String host = name.indexOf(':') >= 0 ? "[" + name + "]" : name;
        return port == defaultPort(scheme) ? host : host + ":" + port;
    }

    /** The URI a request is sent to: the checked address in place of the name. */
    public URI uri(String pathAndQuery)
    {
        String path = pathAndQuery == null || pathAndQuery.isEmpty() ? "/" : pathAndQuery;
        if (!path.startsWith("/"))
            throw new IllegalArgumentException("path: " + pathAndQuery + " (expected: to start with /)");
        return URI.create(scheme + "://" + authority() + path);
    }

    /**
     * The head of a CONNECT request to an egress node for this target, ending with the empty line:
     * {@code CONNECT <address>:<port>} so that the node connects to the checked address. The TLS
     * inside the tunnel is the agent's own, with the name it chose.
     */
    public byte[] connectRequestHead()
    {
        String authority = authority();
        return ("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1);
    }

    /** Whether {@code host} and {@code port}, as Jetty carries them, are this target's address and port. */
    boolean isAddressOf(String host, int port)
    {
        return port == this.port && IpLiteral.parse(host).map(address::equals).orElse(false);
    }

    /** 80 for http, 443 for https. */
    static int defaultPort(String scheme)
    {
        return "http".equalsIgnoreCase(scheme) ? 80 : 443;
    }
}
