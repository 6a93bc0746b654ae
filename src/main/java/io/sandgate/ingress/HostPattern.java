package io.sandgate.ingress;

import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.sandgate.web.GatewayException;

/**
 * {@code ingress.host-pattern}, compiled: which Hosts belong to a sandbox (host mode) rather than to
 * the gateway (path mode), and the origin each sandbox is served under. A sandbox on a host of its
 * own is its own browser origin, so the browser itself keeps one sandbox's pages away from another's
 * cookies, storage, DOM and responses; path mode can only ask the browser to hold back.
 *
 * <p>The pattern is matched whole against the host, ignoring ASCII case as DNS does: {@code {id}}
 * takes one DNS label's characters and must then be an id ({@link IdSyntax}), {@code {port}} takes
 * a port number without leading zeros, so that one sandbox port has exactly one origin.</p>
 */
final class HostPattern
{
    /** No host pattern: every host is the gateway's, served in path mode. */
    static final HostPattern NONE = new HostPattern(null, null, null);

    private static final String ID = "{id}";
    private static final String PORT = "{port}";
    private static final int MAX_HOST_LENGTH = 253;

    private final String template;
    private final Pattern shape;
    private final IdSyntax ids;

    private HostPattern(String template, Pattern shape, IdSyntax ids)
    {
        this.template = template;
        this.shape = shape;
        this.ids = ids;
    }

    /**
     * @param template the configured pattern, already checked by the configuration: lower case,
     *        {@code {id}} once, {@code {port}} at most once, never next to each other
     */
    static HostPattern of(Optional<String> template, IdSyntax ids)
    {
        if (template.isEmpty())
            return NONE;
        StringBuilder regex = new StringBuilder();
        String rest = template.get();
        while (!rest.isEmpty())
        {
            if (rest.startsWith(ID))
            {
                regex.append("(?<id>[a-z0-9-]{1,63})");
                rest = rest.substring(ID.length());
            }
            else if (rest.startsWith(PORT))
            {
                regex.append("(?<port>[1-9][0-9]{0,4})");
                rest = rest.substring(PORT.length());
            }
            else
            {
                int next = nextPlaceholder(rest);
                regex.append(Pattern.quote(rest.substring(0, next)));
                rest = rest.substring(next);
            }
        }
        // ASCII case only: a host is never matched through a Unicode case mapping (U+212A is not k).
        return new HostPattern(template.get(), Pattern.compile(regex.toString(), Pattern.CASE_INSENSITIVE), ids);
    }

    private static int nextPlaceholder(String text)
    {
        int id = text.indexOf(ID);
        int port = text.indexOf(PORT);
        int next = id < 0 ? port : port < 0 ? id : Math.min(id, port);
        return next < 0 ? text.length() : next;
    }

    /**
     * Whether a host has the pattern's shape, whatever its id: such a host is never the gateway's
     * own, even when the id turns out malformed.
     *
     * @param host a Host header value, port allowed
     */
    boolean isSandboxHost(String host)
    {
        return shape != null && host != null && matcher(hostName(host)) != null;
    }

    /**
     * The sandbox a request's host names.
     *
     * @param origin the origin the client used, {@code scheme://host[:port]}, or null
     * @return the sandbox, or null when the host is not of the pattern's shape
     * @throws GatewayException 400 when it is, but its id or port is not one
     */
    SandboxHost match(String origin)
    {
        if (shape == null || origin == null)
            return null;
        int authority = origin.indexOf("://");
        if (authority < 0)
            return null;
        String scheme = origin.substring(0, authority).toLowerCase(Locale.ROOT);
        String host = origin.substring(authority + 3);
        String name = hostName(host);
        Matcher matcher = matcher(name);
        if (matcher == null)
            return null;
        String id = matcher.group("id").toLowerCase(Locale.ROOT);
        if (!ids.isId(id))
            throw GatewayException.badRequest("malformed sandbox id in host");
        int port = 0;
        String portText = template.contains(PORT) ? matcher.group("port") : null;
        if (portText != null)
        {
            port = Integer.parseInt(portText);
            if (port > 65535)
                throw GatewayException.badRequest("malformed sandbox port in host");
        }
        String requestPort = host.substring(name.length());
        boolean defaultPort = requestPort.isEmpty() || (scheme.equals("http") && requestPort.equals(":80"))
            || (scheme.equals("https") && requestPort.equals(":443"));
        // Built from the pattern, not copied from the request: only a host that matched gets here.
        String own = template.replace(ID, id).replace(PORT, portText == null ? "" : portText);
        return new SandboxHost(id, port, scheme + "://" + own + (defaultPort ? "" : requestPort));
    }

    private Matcher matcher(String name)
    {
        if (name.length() > MAX_HOST_LENGTH)
            return null;
        Matcher matcher = shape.matcher(name);
        return matcher.matches() ? matcher : null;
    }

    /** The host without its port; an IPv6 literal (never a sandbox host) is kept whole. */
    private static String hostName(String host)
    {
        if (host.startsWith("["))
            return host;
        int colon = host.lastIndexOf(':');
        return colon < 0 ? host : host.substring(0, colon);
    }
}
