package io.sandgate.admin;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
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

    /** One operation: a method and a path below /admin, one of whose segments may be {@code {id}}. */
    public record Route(String method, String pattern, Handler handler)
    {
        String match(String path)
        {
            int at = pattern.indexOf("/{id}");
            if (at < 0)
                return pattern.equals(path) ? "" : null;
            String prefix = pattern.substring(0, at + 1);
            String suffix = pattern.substring(at + "/{id}".length());
            if (!path.startsWith(prefix) || !path.endsWith(suffix) || path.length() <= prefix.length() + suffix.length())
                return null;
            String id = path.substring(prefix.length(), path.length() - suffix.length());
            return id.indexOf('/') >= 0 ? null : id;
        }
    }

    /** What an operation gets: the {@code {id}} segment, query parameters and the JSON body. */
    public record Call(String id, HttpServletRequest request, JsonNode body)
    {
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
            boolean pathKnown = false;
            for (Route route : routes)
            {
                String id = route.match(path);
                if (id == null)
                    continue;
                pathKnown = true;
                if (!route.method().equals(request.getMethod()))
                    continue;
                Object result;
                try
                {
                    result = route.handler().handle(new Call(id, request, body(request)));
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
