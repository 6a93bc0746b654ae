package io.sandgate.ingress;

import java.net.URI;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

import io.opentelemetry.api.trace.Span;
import io.sandgate.ingress.IngressDecision.Forward;
import io.sandgate.ingress.SandboxHead.Body;
import io.sandgate.tracing.TraceAttributes;
import io.sandgate.tracing.TraceHeaders;
import io.sandgate.web.ClientInfo;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;

/**
 * What a forward to a sandbox changes on its way, in one place for both front-ends: the proxy
 * servlet ({@code IngressServlet}, the WAR) and the embedded runner's handler on Jetty's core API
 * ({@code IngressHandler}). Both hold the headers as Jetty's {@link HttpField}s (the servlet's
 * HttpClient, the handler's own {@code SandboxLink}), so the rules work on those, told apart by their
 * {@link HttpHeader} where the name is a known one.
 *
 * <p>Towards the sandbox, the client's headers go on less hop-by-hop ones
 * (<a href="https://datatracker.ietf.org/doc/html/rfc9110#section-7.6.1">RFC 9110 section 7.6.1</a>)
 * and less the gateway's own: the session cookie under either of its names (a credential for the
 * gateway, not for the sandbox), the sandbox header, {@code Host} (the sandbox is asked under its
 * own address; the browser's host travels as {@code X-Forwarded-Host}) and forwarding headers from
 * a peer that is not a trusted proxy. The {@code X-Forwarded-*} headers that web UIs read are
 * added.</p>
 *
 * <p>Towards the browser, the sandbox's cookies stay in the sandbox ({@link SandboxCookies}), its
 * redirects stay inside the gateway, and in path mode no service worker claims more than its
 * directory; then the gateway adds its confinement policy ({@link SandboxPolicy}) and the session
 * cookie.</p>
 */
public final class ForwardPolicy
{
    /**
     * Hop-by-hop headers, which end at the gateway: those of RFC 9110 and the ones proxies have
     * always treated alike, as Jetty's proxies do.
     */
    static final EnumSet<HttpHeader> HOP_HEADERS = EnumSet.of(HttpHeader.CONNECTION, HttpHeader.KEEP_ALIVE, HttpHeader.PROXY_AUTHORIZATION,
        HttpHeader.PROXY_AUTHENTICATE, HttpHeader.PROXY_CONNECTION, HttpHeader.TRANSFER_ENCODING, HttpHeader.TE, HttpHeader.TRAILER, HttpHeader.UPGRADE);
    /**
     * Headers of a sandbox's answer whose effect outlasts the answer and reaches past the sandbox: the
     * gateway's whole origin in path mode, and in host mode the site its sandboxes share
     * ({@code Clear-Site-Data: "cookies"} clears every cookie of the registrable domain, the
     * gateway's session cookie with them). Origin policy is the gateway's to set, not a sandbox's.
     */
    private static final EnumSet<HttpHeader> ORIGIN_WIDE = EnumSet.of(HttpHeader.STRICT_TRANSPORT_SECURITY, HttpHeader.ALT_SVC);
    private static final List<String> OTHER_ORIGIN_WIDE = List.of("Clear-Site-Data", "NEL", "Report-To", "Accept-CH", "Critical-CH");
    /** The header that lets a service worker claim a wider scope than its script's directory. */
    static final String SERVICE_WORKER_ALLOWED = "Service-Worker-Allowed";
    /** Where noVNC 1.3 opens its WebSocket when told {@code path=vnc/websockify}: no id, the cookie routes it. */
    static final String IDLESS_WEBSOCKET = "websockify";
    /** {@link ClientInfo#FORWARDING_HEADERS} that Jetty knows by name. */
    private static final EnumSet<HttpHeader> KNOWN_FORWARDING = EnumSet.of(HttpHeader.X_FORWARDED_FOR, HttpHeader.X_FORWARDED_PROTO,
        HttpHeader.X_FORWARDED_HOST, HttpHeader.X_FORWARDED_PORT, HttpHeader.FORWARDED);
    /** The other ones. */
    private static final List<String> OTHER_FORWARDING = ClientInfo.FORWARDING_HEADERS.stream()
        .filter(name -> !KNOWN_FORWARDING.contains(HttpHeader.CACHE.get(name))).toList();

    private final Ingress ingress;
    private final String sandboxHeader;
    private final String cookieName;
    private final String hostCookieName;
    private final SandboxCookies cookies;
    private final Confinements confinements;

    ForwardPolicy(Ingress ingress)
    {
        this.ingress = ingress;
        this.sandboxHeader = ingress.config().header();
        this.cookieName = ingress.config().cookie().name();
        this.hostCookieName = SessionResolver.HOST_COOKIE_PREFIX + cookieName;
        this.cookies = new SandboxCookies(cookieName);
        this.confinements = new Confinements(ingress.mount(), List.of(ingress.mount() + IDLESS_WEBSOCKET));
    }

    /**
     * Copies the client's headers to the sandbox's request in one pass: each header goes on as it
     * came, unless it is hop-by-hop, listed by {@code Connection}, or the gateway's own; the Cookie
     * headers go on as one, without the session cookie.
     *
     * @param trusted whether the peer is a trusted proxy, whose forwarding headers are kept
     */
    public void copyRequestHeaders(HttpFields fromClient, HttpFields.Mutable toSandbox, boolean trusted)
    {
        forwardRequestHeaders(fromClient, trusted, toSandbox::add);
    }

    /** What {@link #copyRequestHeaders} copies, each field handed to {@code to} in turn, the Cookie last. */
    private void forwardRequestHeaders(HttpFields fromClient, boolean trusted, Consumer<HttpField> to)
    {
        List<String> connection = connectionNames(fromClient);
        StringBuilder kept = null;
        for (HttpField field : fromClient)
        {
            HttpHeader header = field.getHeader();
            if (header == HttpHeader.COOKIE)
            {
                String rest = CookiePairs.withoutSession(field.getValue(), cookieName, hostCookieName);
                if (rest != null)
                    kept = kept == null ? new StringBuilder(rest) : kept.append("; ").append(rest);
                continue;
            }
            if (header == HttpHeader.HOST || HOP_HEADERS.contains(header) || field.is(sandboxHeader))
                continue;
            if (!trusted && (KNOWN_FORWARDING.contains(header) || (header == null && isOneOf(field, OTHER_FORWARDING))))
                continue;
            // Whatever Connection names is for this hop only (RFC 9110 section 7.6.1).
            if (!connection.isEmpty() && isOneOf(field, connection))
                continue;
            to.accept(field);
        }
        if (kept != null)
            to.accept(new HttpField(HttpHeader.COOKIE, kept.toString()));
    }

    /**
     * The fields a message's {@code Connection} names for its hop only (RFC 9110 section 7.6.1), which
     * go no further than the gateway; {@code close} and {@code keep-alive} name none. Never
     * {@code Content-Length}: listing the framing as hop-by-hop is how a request is smuggled past a
     * proxy that drops the length and passes the body on, which the next hop then reads as a request
     * of its own.
     */
    public static List<String> connectionNames(HttpFields fields)
    {
        int count = 0;
        String only = null;
        for (HttpField field : fields)
        {
            if (field.getHeader() == HttpHeader.CONNECTION)
            {
                count++;
                only = field.getValue();
            }
        }
        // The usual case, a browser's or a server's one keep-alive, without the list parser's copies.
        if (count == 0 || count == 1 && (only.equalsIgnoreCase("keep-alive") || only.equalsIgnoreCase("close")))
            return List.of();
        List<String> names = new ArrayList<>(fields.getCSV(HttpHeader.CONNECTION, false));
        names.removeIf(name -> name.equalsIgnoreCase("close") || name.equalsIgnoreCase("keep-alive")
            || name.equalsIgnoreCase(HttpHeader.CONTENT_LENGTH.asString()));
        return names;
    }

    /**
     * The sandbox's URI for a path and query as the client sent it, for the APIs that take a
     * {@link URI} (Jetty's client on the servlets, the WebSocket handshake). Browsers send some
     * characters unescaped that a URI may not hold ({@code ?q={}}, {@code |}, a {@code %} that
     * starts no escape), and Jetty's server takes them; the core front-end forwards them as they
     * came, and here they are escaped, which a sandbox decodes to the same.
     */
    public static URI sandboxUri(Route route, String pathAndQuery)
    {
        return URI.create(sandboxTarget(route, pathAndQuery));
    }

    /**
     * {@link #sandboxUri} as text, for an API that parses it itself (Jetty's client, given a
     * string): built and then parsed once, not parsed, printed and parsed again.
     */
    public static String sandboxTarget(Route route, String pathAndQuery)
    {
        return "http://" + route.authority() + UriEscape.uriSafe(pathAndQuery);
    }

    private static boolean isOneOf(HttpField field, List<String> names)
    {
        for (String name : names)
        {
            if (field.is(name))
                return true;
        }
        return false;
    }

    /**
     * Adds the de-facto {@code X-Forwarded-*} headers that web UIs in sandboxes read.
     * {@code X-Forwarded-Prefix} tells the sandbox where it is mounted so that it can build absolute
     * links; a sandbox at the root of its own host is mounted nowhere.
     *
     * @param remoteAddr the peer's address, appended to a trusted proxy's chain
     * @param scheme the scheme the client used ({@link ClientInfo#scheme})
     * @param host the host the client used ({@link ClientInfo#host})
     */
    public void addForwardingHeaders(HttpFields.Mutable toSandbox, Forward forward, String remoteAddr, String scheme, String host)
    {
        String chain = toSandbox.get(HttpHeader.X_FORWARDED_FOR);
        toSandbox.remove(HttpHeader.X_FORWARDED_FOR);
        toSandbox.remove(HttpHeader.X_FORWARDED_PROTO);
        toSandbox.remove(HttpHeader.X_FORWARDED_HOST);
        toSandbox.remove(ClientInfo.X_FORWARDED_PREFIX);
        forwardingHeaders(chain, forward, remoteAddr, scheme, host, toSandbox::add);
    }

    /** The fields {@link #addForwardingHeaders} sets, given the chain a trusted proxy sent (or null), each handed to {@code to}. */
    private void forwardingHeaders(String chain, Forward forward, String remoteAddr, String scheme, String host, Consumer<HttpField> to)
    {
        to.accept(new HttpField(HttpHeader.X_FORWARDED_FOR, chain == null ? remoteAddr : chain + ", " + remoteAddr));
        if (scheme != null)
            to.accept(new HttpField(HttpHeader.X_FORWARDED_PROTO, scheme));
        if (host != null)
            to.accept(new HttpField(HttpHeader.X_FORWARDED_HOST, host));
        String mount = mount(forward);
        if (!mount.isEmpty())
            to.accept(new HttpField(ClientInfo.X_FORWARDED_PREFIX, mount));
    }

    /** Whether the gateway sets a field of this name itself ({@link #forwardingHeaders}), in place of a trusted proxy's. */
    private static boolean isForwardingSet(HttpField field)
    {
        HttpHeader header = field.getHeader();
        return header == HttpHeader.X_FORWARDED_FOR || header == HttpHeader.X_FORWARDED_PROTO || header == HttpHeader.X_FORWARDED_HOST
            || header == null && field.is(ClientInfo.X_FORWARDED_PREFIX);
    }

    /**
     * Writes the fields of the request head the core front-end sends a sandbox, in one pass over the
     * client's fields: those {@link #copyRequestHeaders} lets through, less {@code Expect} (the
     * server answers a 100-continue itself, once the body is read to go on) and those the gateway
     * sets itself, then the gateway's own: {@code Via}, the {@code X-Forwarded-*} fields, {@code Host},
     * the framing the link sends the body with, whatever the client's head said of it, and the
     * trace context. The same fields as the copy followed by {@link #addForwardingHeaders} and the
     * other puts, which the servlet path makes on Jetty's client request; here no field list is
     * built and walked again for each put, a cost that grows with a browser's dozen header lines.
     *
     * @param head the head, its request line written ({@code forward.upstreamPath()} as the target)
     * @param hop this hop's Via entry, appended to the client's Via
     * @param authority the sandbox's address, its {@code Host}
     * @param length the body's length, sent when the link sends the body as it is
     * @param span the gateway's span for the request, or null when not traced
     */
    public void requestHead(SandboxHead head, HttpFields fromClient, boolean trusted, String hop, Forward forward, String remoteAddr,
                            String scheme, String host, String authority, Body body, long length, Span span)
    {
        List<HttpField> trace = span == null ? List.of() : traceHeaders(span);
        // The first X-Forwarded-For a trusted proxy sent, the chain the gateway's own extends; set as the fields go by.
        String[] chain = {null};
        forwardRequestHeaders(fromClient, trusted, field ->
        {
            HttpHeader header = field.getHeader();
            if (header == HttpHeader.EXPECT || header == HttpHeader.VIA || header == HttpHeader.CONTENT_LENGTH && body == Body.AS_IS)
                return;
            if (isForwardingSet(field))
            {
                if (header == HttpHeader.X_FORWARDED_FOR && chain[0] == null)
                    chain[0] = field.getValue();
                return;
            }
            if (span != null && isTraceSet(field, trace))
                return;
            head.field(field);
        });
        String via = fromClient.get(HttpHeader.VIA);
        head.field(HttpHeader.VIA.asString(), (via == null || via.isBlank() ? "" : via + ", ") + hop);
        forwardingHeaders(chain[0], forward, remoteAddr, scheme, host, head::field);
        head.field(HttpHeader.HOST.asString(), authority);
        if (body == Body.CHUNKED)
            head.field(HttpHeader.TRANSFER_ENCODING.asString(), "chunked");
        else if (body == Body.AS_IS)
            head.field(HttpHeader.CONTENT_LENGTH.asString(), Long.toString(length));
        trace.forEach(head::field);
    }

    /**
     * Makes the sandbox's request a child of the gateway's span: the client's {@code traceparent}
     * (copied with its other headers) names the client's span, which the sandbox would otherwise
     * take for its parent, skipping the gateway's hop.
     */
    public static void addTraceHeaders(HttpFields.Mutable toSandbox, Span span)
    {
        toSandbox.remove(TraceHeaders.TRACESTATE);
        TraceHeaders.inject(span, toSandbox::put);
    }

    /** What {@link #addTraceHeaders} puts, as fields. */
    private static List<HttpField> traceHeaders(Span span)
    {
        List<HttpField> fields = new ArrayList<>(2);
        TraceHeaders.inject(span, (name, value) -> fields.add(new HttpField(name, value)));
        return fields;
    }

    /** Whether {@link #addTraceHeaders} would remove or replace a client's field. */
    private static boolean isTraceSet(HttpField field, List<HttpField> trace)
    {
        if (field.is(TraceHeaders.TRACESTATE))
            return true;
        for (HttpField set : trace)
        {
            if (field.is(set.getName()))
                return true;
        }
        return false;
    }

    /**
     * Names the request's server span after the ingress route and notes what a reader of the trace
     * looks for: which sandbox, and how the gateway found it. Nothing of the session cookie or a
     * grant: those never reach a span.
     */
    public void describe(Span span, String method, Forward forward)
    {
        String route = forward.hostMode() ? mount(forward) + "/*" : ingress.mount() + "{id}/*";
        span.updateName(TraceAttributes.namePart(method) + " " + route);
        span.setAttribute(TraceAttributes.HTTP_ROUTE, route);
        span.setAttribute(TraceAttributes.FACE, "ingress");
        span.setAttribute(TraceAttributes.SANDBOX_ID, forward.sandboxId());
        span.setAttribute(TraceAttributes.ROUTE_SOURCE, forward.source().label());
    }

    /**
     * One header of the sandbox's response as the browser gets it. Keeps the sandbox's cookies to the
     * sandbox (see {@link SandboxCookies}) and its redirects inside the gateway: a sandbox answering
     * {@code Location: /x} or {@code http://10.1.2.3:6080/x} means its own {@code /x}, which the
     * browser reaches under the sandbox's mount. Rewriting also keeps pod addresses from leaking to
     * the browser. In path mode a service worker may not claim a scope wider than its directory:
     * scoped to {@code /vnc/} it would see other sandboxes' requests. Hop-by-hop fields, those the
     * answer's {@code Connection} names, and those that would set policy for more than the sandbox
     * ({@link #ORIGIN_WIDE}) stop here.
     *
     * @param route where the request went, to recognise the sandbox's own absolute redirects
     * @param connection what the answer's {@code Connection} names ({@link #connectionNames})
     * @return the header to send, rewritten or as it came, or null to drop it
     */
    public HttpField toBrowser(HttpField field, Forward forward, Route route, List<String> connection)
    {
        if (!connection.isEmpty() && isOneOf(field, connection))
            return null;
        HttpHeader header = field.getHeader();
        if (header == HttpHeader.SET_COOKIE)
        {
            // Under the sandbox's own mount even when the request came without the id.
            String confined = forward.hostMode() ? cookies.confineToHost(field.getValue())
                : cookies.confine(field.getValue(), ingress.mount() + forward.sandboxId(), forward.upstreamPath());
            return confined == null ? null : new HttpField(HttpHeader.SET_COOKIE, confined);
        }
        if (header == HttpHeader.LOCATION)
        {
            String location = location(field.getValue(), forward, route);
            return location.equals(field.getValue()) ? field : new HttpField(HttpHeader.LOCATION, location);
        }
        if (header != null)
            return HOP_HEADERS.contains(header) || ORIGIN_WIDE.contains(header) ? null : field;
        if (isOneOf(field, OTHER_ORIGIN_WIDE))
            return null;
        return !forward.hostMode() && field.is(SERVICE_WORKER_ALLOWED) ? null : field;
    }

    /**
     * Whether a header of the sandbox's response is the first of its name there. The first replaces
     * what the server set already (Jetty sets {@code Date} on every response), the others are added
     * to it, as Jetty's proxies do.
     */
    public static boolean isFirstOfName(HttpFields fromSandbox, HttpField field)
    {
        return (field.getHeader() != null ? fromSandbox.getField(field.getHeader()) : fromSandbox.getField(field.getName())) == field;
    }

    /**
     * The fields the server set before the sandbox's: the first {@code count} of the response, read
     * in one pass (asking a response's fields for one by index walks them from the start each time).
     */
    public static HttpField[] presets(HttpFields toBrowser, int count)
    {
        HttpField[] presets = new HttpField[count];
        int i = 0;
        for (HttpField field : toBrowser)
        {
            if (i == count)
                break;
            presets[i++] = field;
        }
        return presets;
    }

    /**
     * Where the server set a field of this one's name before the sandbox's fields ({@link #presets}).
     * The core front-end's way to {@link #isFirstOfName}'s end: a look at the one or two preset
     * fields instead of a pass over all the sandbox's.
     *
     * @return the preset field's index, or -1
     */
    public static int presetOfName(HttpField[] presets, HttpField field)
    {
        for (int i = 0; i < presets.length; i++)
        {
            HttpField set = presets[i];
            if (field.getHeader() != null ? set.getHeader() == field.getHeader() : set.is(field.getName()))
                return i;
        }
        return -1;
    }

    private String location(String value, Forward forward, Route route)
    {
        String path = value;
        if (value.startsWith("//"))
            return value;
        if (!value.startsWith("/"))
        {
            try
            {
                URI uri = URI.create(value);
                if (uri.getRawAuthority() == null || !uri.getRawAuthority().equalsIgnoreCase(route.authority()))
                    return value;
                path = (uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath()) + (uri.getRawQuery() == null ? "" : "?" + uri.getRawQuery());
            }
            catch (IllegalArgumentException x)
            {
                return value;
            }
        }
        return mount(forward) + path;
    }

    /**
     * Adds what the gateway says after the sandbox's own headers: in path mode the policy that keeps
     * the sandbox's pages to its own path (see {@link SandboxPolicy}), after the sandbox's own policy
     * so that one of the sandbox's can only narrow it, never replace it; and the session cookie, only
     * now that the sandbox is known to answer, since a cookie naming a dead sandbox would misroute
     * the id-less requests that follow.
     *
     * @param origin the gateway's origin as the client used it ({@link ClientInfo#origin})
     * @param add adds one header to the browser's response
     */
    public void addToBrowser(Forward forward, String origin, Consumer<HttpField> add)
    {
        if (!forward.hostMode())
            add.accept(confinements.field(origin, forward.sandboxId()));
        if (forward.setCookie() != null)
            add.accept(new HttpField(HttpHeader.SET_COOKIE, forward.setCookie()));
    }

    /**
     * Where the sandbox appears to the browser, without a trailing slash: {@code /vnc/42} for a
     * request that named it in the path, the bare prefix {@code /vnc} for one resolved otherwise,
     * and in host mode the root of the sandbox's host (the context path, usually empty).
     */
    String mount(Forward forward)
    {
        String prefix = ingress.mount();
        if (forward.hostMode())
            return prefix.substring(0, prefix.length() - ingress.config().prefix().length());
        return forward.source() == IngressDecision.Source.PATH ? prefix + forward.sandboxId() : prefix.substring(0, prefix.length() - 1);
    }

    /** The Cookie header without the named cookie (nor its {@code __Host-} form), or null when nothing is left. */
    public static String withoutSessionCookie(String header, String name)
    {
        return CookiePairs.withoutSession(header, name, SessionResolver.HOST_COOKIE_PREFIX + name);
    }

    /**
     * Adds the session cookie's values in the request's {@code Cookie} headers to {@code values}.
     * They are read from exactly the pairs {@link #copyRequestHeaders} drops ({@link CookiePairs}).
     */
    public void addSessionCookies(String header, List<String> values)
    {
        CookiePairs.addSessionValues(header, cookieName, hostCookieName, values);
    }

    /** Whether a request asks to become a WebSocket: those go to {@code WebSocketBridge}. */
    public static boolean isWebSocketUpgrade(String method, String upgrade)
    {
        return "GET".equals(method) && upgrade != null && upgrade.toLowerCase(Locale.ROOT).contains("websocket");
    }
}
