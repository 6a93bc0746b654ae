package io.sandgate.ops;

import java.io.IOException;

import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/** {@code /metrics} in the Prometheus text format. */
public final class MetricsServlet extends HttpServlet
{
    private final PrometheusMeterRegistry registry;

    public MetricsServlet(PrometheusMeterRegistry registry)
    {
        this.registry = registry;
    }

    @Override
    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException
    {
        response.setContentType("text/plain; version=0.0.4; charset=utf-8");
        response.getWriter().write(registry.scrape());
    }
}
