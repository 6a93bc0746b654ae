package io.sandgate.net;

import java.net.URI;
import java.net.URISyntaxException;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * Browser origins ({@code scheme://host[:port]}, RFC 6454) and the one rule every face applies to
 * a request that carries one: it passes for a loopback origin, a configured origin, or an origin
 * the caller adds (a face's allow-list). A host-mode sandbox takes the rule without the loopback
 * pass ({@link #exactly}): its own origin and its own list only. What the request's {@code Host}
 * header says is never part of it: a DNS-rebinding page controls both.
 */
public final class Origins
{
    /** 127.0.0.0/8 written as four decimal numbers, as a canonical origin has it. */
    private static final Pattern LOOPBACK_V4 = Pattern.compile("127\\.\\d{1,3}\\.\\d{1,3}\\.\\d{1,3}");

    private final List<String> allowed;
    private final boolean any;
    /** Whether a loopback origin passes by itself. */
    private final boolean loopback;

    /**
     * @param allowed canonical origins, {@code *} for any
     */
    public Origins(List<String> allowed)
    {
        this(allowed, true);
    }

    private Origins(List<String> allowed, boolean loopback)
    {
        this.any = allowed.contains("*");
        this.allowed = allowed.stream().filter(o -> !o.equals("*")).map(o -> canonical(o, "origin")).toList();
        this.loopback = loopback;
    }

    /**
     * Exactly these origins, and the one a request adds: no loopback origin passes by itself, and
     * {@code *} is no origin. For a sandbox on a host of its own, whose pages are its own: a loopback
     * origin is the gateway's own in a deployment on one machine, where the path-mode pages of every
     * sandbox run.
     *
     * @param allowed canonical origins
     */
    public static Origins exactly(List<String> allowed)
    {
        if (allowed.contains("*"))
            throw new IllegalArgumentException("origin: * (expected: origins such as https://app.example)");
        return new Origins(allowed, false);
    }

    /** Origins allowed by these and by {@code more}. */
    public Origins and(List<String> more)
    {
        List<String> all = new java.util.ArrayList<>(allowed);
        if (any)
            all.add("*");
        all.addAll(more);
        return new Origins(all, loopback);
    }

    /** Whether a request with this {@code Origin} may proceed; {@code extra} is an origin allowed for this request only, or null. */
    public boolean allows(String origin, String extra)
    {
        if (any)
            return true;
        String canonical;
        try
        {
            canonical = canonical(origin, "Origin");
        }
        catch (IllegalArgumentException x)
        {
            // "null" (sandboxed frames, file: pages) and garbage never pass.
            return false;
        }
        return (loopback && isLoopback(canonical)) || allowed.contains(canonical) || canonical.equals(extra);
    }

    /**
     * The canonical form of an origin: lower-case scheme and host, no default port, nothing after
     * the authority.
     *
     * @throws IllegalArgumentException naming {@code what} when it is not an http(s) origin
     */
    public static String canonical(String origin, String what)
    {
        URI uri;
        try
        {
            uri = new URI(origin);
        }
        catch (URISyntaxException x)
        {
            throw new IllegalArgumentException(what + ": " + origin + " (expected: an origin such as https://gw.example)");
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!(scheme.equals("http") || scheme.equals("https")) || uri.getHost() == null || uri.getRawUserInfo() != null
            || (uri.getRawPath() != null && !uri.getRawPath().isEmpty()) || uri.getRawQuery() != null || uri.getRawFragment() != null)
            throw new IllegalArgumentException(what + ": " + origin + " (expected: an origin such as https://gw.example)");
        int port = uri.getPort();
        boolean defaultPort = port == -1 || (scheme.equals("http") && port == 80) || (scheme.equals("https") && port == 443);
        return scheme + "://" + uri.getHost().toLowerCase(Locale.ROOT) + (defaultPort ? "" : ":" + port);
    }

    /**
     * Whether a canonical origin is on this machine: {@code localhost}, 127.0.0.0/8 or [::1]. Names
     * under {@code .localhost} are not: host mode gives each sandbox one of those.
     */
    static boolean isLoopback(String canonical)
    {
        String host = canonical.substring(canonical.indexOf("://") + 3);
        int colon = host.startsWith("[") ? host.indexOf("]:") + 1 : host.lastIndexOf(':');
        if (colon > 0)
            host = host.substring(0, colon);
        return host.equals("localhost") || host.equals("[::1]") || LOOPBACK_V4.matcher(host).matches();
    }
}
