package io.sandgate.ops;

import java.io.IOException;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.core.StoreHealth;
import io.sandgate.store.Store;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;

/**
 * {@code /healthz}: the process answers. {@code /readyz}: it can serve; with Redis down it still
 * serves cached routes, so it answers 200 "degraded" rather than taking every replica out of the
 * load balancer during a Redis blip. A replica that drains answers 503 "draining" from the first
 * moment, while it still serves what arrives: that is how the balancer learns to send nothing new.
 */
public final class HealthServlet extends HttpServlet
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Store store;
    private final Drain drain;

    public HealthServlet(Store store, Drain drain)
    {
        this.store = store;
        this.drain = drain;
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException
    {
        ObjectNode body = JSON.createObjectNode();
        if (request.getServletPath().endsWith("readyz"))
        {
            StoreHealth health = store.health();
            boolean draining = drain.draining();
            if (draining)
                response.setStatus(HttpStatus.SERVICE_UNAVAILABLE_503);
            body.put("status", draining ? "draining" : health.reachable() ? "ready" : "degraded");
            body.putObject("store").put("type", health.type()).put("reachable", health.reachable()).put("detail", health.detail());
        }
        else
        {
            body.put("status", "alive");
        }
        response.setContentType("application/json");
        response.setHeader(HttpHeader.CACHE_CONTROL.asString(), "no-store");
        response.getWriter().write(body.toString());
    }
}
