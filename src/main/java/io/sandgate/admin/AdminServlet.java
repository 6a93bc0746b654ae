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

    /**
     * @param views read-only JSON views by path below /admin, e.g. {@code /egress/pools}
     */
    public AdminServlet(Optional<Secret> token, Map<String, Supplier<Object>> views)
    {
        this.token = token;
        this.views = Map.copyOf(views);
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
            Supplier<Object> view = views.get(request.getPathInfo());
            if (view == null)
                throw GatewayException.notFound("no admin resource " + request.getPathInfo());
            if (!"GET".equals(request.getMethod()))
                throw new GatewayException(405, "method_not_allowed", "use GET");
            response.setContentType("application/json");
            response.setHeader("Cache-Control", "no-store");
            JSON.writeValue(response.getOutputStream(), view.get());
        }
        catch (RuntimeException x)
        {
            Errors.write(request, response, Errors.map(x));
        }
    }
}
