package io.sandgate.admin;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.config.Secret;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * The admin API under {@code /admin/}, guarded by {@code Authorization: Bearer <admin.token>}. With
 * no token configured it is off (404), so a forgotten setting never leaves it open.
 */
public final class AdminServlet extends HttpServlet
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Optional<Secret> token;
    private final Map<String, Supplier<Object>> views;
    private final Map<String, Supplier<Object>> actions;

    /**
     * @param views read-only JSON views by path below /admin (GET), e.g. {@code /egress/pools}
     * @param actions operations by path below /admin (POST), e.g. {@code /egress/reload}; they
     *        throw IllegalArgumentException to refuse with 409
     */
    public AdminServlet(Optional<Secret> token, Map<String, Supplier<Object>> views, Map<String, Supplier<Object>> actions)
    {
        this.token = token;
        this.views = Map.copyOf(views);
        this.actions = Map.copyOf(actions);
    }

    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws IOException
    {
        try
        {
            if (token.isEmpty())
                throw GatewayException.notFound("the admin API is off: set admin.token");
            String authorization = request.getHeader("Authorization");
            byte[] presented = authorization != null && authorization.startsWith("Bearer ")
                ? authorization.substring(7).getBytes(StandardCharsets.UTF_8) : new byte[0];
            if (!MessageDigest.isEqual(presented, token.get().bytes()))
            {
                response.setHeader("WWW-Authenticate", "Bearer realm=\"sandgate-admin\"");
                throw new GatewayException(401, "unauthorized", "admin token missing or wrong");
            }
            String path = request.getPathInfo();
            Map<String, Supplier<Object>> handlers = "POST".equals(request.getMethod()) ? actions : views;
            Supplier<Object> handler = handlers.get(path);
            if (handler == null)
            {
                if (views.containsKey(path) || actions.containsKey(path))
                    throw new GatewayException(405, "method_not_allowed", views.containsKey(path) ? "use GET" : "use POST");
                throw GatewayException.notFound("no admin resource " + path);
            }
            Object result;
            try
            {
                result = handler.get();
            }
            catch (IllegalArgumentException x)
            {
                throw new GatewayException(409, "conflict", x.getMessage());
            }
            response.setContentType("application/json");
            response.setHeader("Cache-Control", "no-store");
            JSON.writeValue(response.getOutputStream(), result);
        }
        catch (RuntimeException x)
        {
            Errors.write(request, response, Errors.map(x));
        }
    }
}
