package io.sandgate.admin;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.core.Audit;
import io.sandgate.core.Secret;
import io.sandgate.net.Origins;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.util.URIUtil;

/**
 * The admin API under {@code /admin/}, guarded by {@code Authorization: Bearer <admin.token>}. With
 * no token configured it is off (404), so a forgotten setting never leaves it open. JSON in and
 * out; errors in the one error format.
 */
public final class AdminServlet extends HttpServlet
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int MAX_BODY = 64 * 1024;
    // Jetty's HttpHeader has neither.
    private static final String CONTENT_SECURITY_POLICY = "Content-Security-Policy";
    private static final String X_FRAME_OPTIONS = "X-Frame-Options";
    private static final String NO_FRAMING = "frame-ancestors 'none'";

    private final Optional<Secret> token;
    private final List<Route> routes;
    private final Origins origins;

    /**
     * One operation: a method and a path below /admin, whose segments in braces ({@code {id}},
     * {@code {tool}}) match any one non-empty segment, percent-decoded on its own: an encoded
     * {@code /} or {@code ..} in a name stays inside its segment.
     */
    public record Route(String method, String pattern, Handler handler)
    {
        /** The segments in braces, in order, or null when the path is another one. */
        List<String> match(List<String> segments)
        {
            String[] parts = pattern.substring(1).split("/", -1);
            if (parts.length != segments.size())
                return null;
            List<String> values = new ArrayList<>();
            for (int i = 0; i < parts.length; i++)
            {
                String segment = segments.get(i);
                if (parts[i].startsWith("{") && parts[i].endsWith("}"))
                {
                    if (segment.isEmpty())
                        return null;
                    values.add(segment);
                }
                else if (!parts[i].equals(segment))
                {
                    return null;
                }
            }
            return values;
        }
    }

    /** What an operation gets: the segments in braces, query parameters and the JSON body. */
    public record Call(List<String> segments, HttpServletRequest request, JsonNode body)
    {
        /** The first segment in braces. */
        public String id()
        {
            return segments.isEmpty() ? "" : segments.get(0);
        }

        /** The second segment in braces. */
        public String second()
        {
            return segments.get(1);
        }

        public int intParam(String name, int fallback, int max)
        {
            String value = request.getParameter(name);
            if (value == null)
                return fallback;
            try
            {
                int parsed = Integer.parseInt(value);
                if (parsed < 0 || parsed > max)
                    throw GatewayException.badRequest(name + ": " + value + " (expected: 0 to " + max + ")");
                return parsed;
            }
            catch (NumberFormatException x)
            {
                throw GatewayException.badRequest(name + ": " + value + " (expected: a number)");
            }
        }
    }

    /** An operation; returns the JSON answer, or null for 204. IllegalArgumentException answers 409. */
    @FunctionalInterface
    public interface Handler
    {
        Object handle(Call call);
    }

    /**
     * @param origins browser origins allowed to call the API ({@code server.public-origins} and
     *        loopback); requests from anywhere else that carry an Origin are refused
     */
    public AdminServlet(Optional<Secret> token, List<Route> routes, Origins origins)
    {
        this.token = token;
        this.routes = List.copyOf(routes);
        this.origins = origins;
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException
    {
        // In path mode sandbox pages share the gateway's origin: none of them, nor any other site,
        // may frame an admin page (and dress it up to make a user act in it). Every answer, errors
        // included, says so; X-Frame-Options for browsers that predate frame-ancestors.
        response.setHeader(CONTENT_SECURITY_POLICY, NO_FRAMING);
        response.setHeader(X_FRAME_OPTIONS, "DENY");
        String pathInfo = request.getPathInfo() == null ? "/" : request.getPathInfo();
        try
        {
            if (token.isEmpty())
                throw GatewayException.notFound("the admin API is off: set admin.token");
            // A page elsewhere (or a sandbox's, or a rebinding one) must not drive the API with a
            // token the browser holds; tools that are not browsers send no Origin.
            String origin = request.getHeader(HttpHeader.ORIGIN.asString());
            if (origin != null && !origins.allows(origin, null))
                throw GatewayException.forbidden("origin " + origin + " may not call the admin API: add it to server.public-origins");
            if (isDashboard(pathInfo))
            {
                // The dashboard's files carry nothing secret: the page asks for the token and
                // every call it makes is checked like any other.
                dashboard(request, response, pathInfo);
                return;
            }
            String authorization = request.getHeader(HttpHeader.AUTHORIZATION.asString());
            if (authorization == null || !authorization.startsWith("Bearer "))
            {
                response.setHeader(HttpHeader.WWW_AUTHENTICATE.asString(), "Bearer realm=\"sandgate-admin\"");
                throw new GatewayException(HttpStatus.UNAUTHORIZED_401, "unauthorized", "admin token missing");
            }
            if (!MessageDigest.isEqual(authorization.substring(7).getBytes(StandardCharsets.UTF_8), token.get().bytes()))
                throw GatewayException.forbidden("admin token wrong");
            String path = pathInfo;
            List<String> segments = segments(request);
            boolean pathKnown = false;
            for (Route route : routes)
            {
                List<String> values = route.match(segments);
                if (values == null)
                    continue;
                pathKnown = true;
                if (!route.method().equals(request.getMethod()))
                    continue;
                Object result;
                try
                {
                    result = route.handler().handle(new Call(values, request, body(request)));
                }
                catch (IllegalArgumentException x)
                {
                    throw new GatewayException(HttpStatus.CONFLICT_409, "conflict", x.getMessage());
                }
                response.setHeader(HttpHeader.CACHE_CONTROL.asString(), "no-store");
                if (result == null)
                {
                    response.setStatus(HttpStatus.NO_CONTENT_204);
                    return;
                }
                response.setContentType("application/json");
                JSON.writeValue(response.getOutputStream(), result);
                return;
            }
            if (pathKnown)
                throw new GatewayException(HttpStatus.METHOD_NOT_ALLOWED_405, "method_not_allowed", "method not allowed on " + path);
            throw GatewayException.notFound("no admin resource " + path);
        }
        catch (RuntimeException x)
        {
            Errors.write(request, response, Errors.map(x));
        }
        finally
        {
            // Every call with an answer, refusals included; the dashboard's static files are no call.
            if (token.isPresent() && !isDashboard(pathInfo))
                Audit.adminCall(request.getMethod(), request.getRequestURI(), response.getStatus(), request.getRemoteAddr());
        }
    }

    /** The path below /admin as sent, cut into segments, each then percent-decoded. */
    private static List<String> segments(HttpServletRequest request)
    {
        String raw = request.getRequestURI().substring(request.getContextPath().length() + request.getServletPath().length());
        List<String> segments = new ArrayList<>();
        for (String segment : (raw.startsWith("/") ? raw.substring(1) : raw).split("/", -1))
            segments.add(URIUtil.decodePath(segment));
        return segments;
    }

    private static boolean isDashboard(String pathInfo)
    {
        return pathInfo.equals("/ui") || pathInfo.startsWith("/ui/");
    }

    private static final java.util.Map<String, String> UI_FILES = java.util.Map.of(
        "/ui/", "index.html", "/ui/index.html", "index.html", "/ui/app.js", "app.js", "/ui/style.css", "style.css");

    private static void dashboard(HttpServletRequest request, HttpServletResponse response, String path) throws IOException
    {
        if (path.equals("/ui"))
        {
            response.setStatus(HttpStatus.PERMANENT_REDIRECT_308);
            response.setHeader(HttpHeader.LOCATION.asString(), request.getRequestURI() + "/");
            return;
        }
        String file = UI_FILES.get(path);
        if (file == null || !"GET".equals(request.getMethod()))
            throw GatewayException.notFound("no dashboard file " + path);
        try (java.io.InputStream in = AdminServlet.class.getResourceAsStream("ui/" + file))
        {
            if (in == null)
                throw GatewayException.notFound("dashboard not packaged");
            response.setContentType(file.endsWith(".html") ? "text/html;charset=utf-8" : file.endsWith(".js") ? "text/javascript" : "text/css");
            response.setHeader(CONTENT_SECURITY_POLICY, "default-src 'self'; connect-src 'self'; " + NO_FRAMING);
            response.setHeader(HttpHeader.CACHE_CONTROL.asString(), "no-cache");
            in.transferTo(response.getOutputStream());
        }
    }

    private static JsonNode body(HttpServletRequest request) throws IOException
    {
        if (!"PUT".equals(request.getMethod()) && !"POST".equals(request.getMethod()))
            return null;
        byte[] bytes = request.getInputStream().readNBytes(MAX_BODY + 1);
        if (bytes.length > MAX_BODY)
            throw new GatewayException(HttpStatus.PAYLOAD_TOO_LARGE_413, "too_large", "admin bodies are limited to " + MAX_BODY + " bytes");
        if (bytes.length == 0)
            return null;
        try
        {
            return JSON.readTree(bytes);
        }
        catch (IOException x)
        {
            throw GatewayException.badRequest("body is not JSON");
        }
    }
}
