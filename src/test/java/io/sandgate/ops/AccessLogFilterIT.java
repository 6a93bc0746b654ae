package io.sandgate.ops;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.EnumSet;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.leak.Redactor;
import io.sandgate.testing.LogCapture;
import io.sandgate.tracing.Tracing;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.hamcrest.MatcherAssert.assertThat;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.containsString;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The access log writes the status the client got: an exception that escapes a servlet becomes the
 * container's 500 page after the filter has returned, while the response object still says 200.
 */
class AccessLogFilterIT
{
    private Server server;
    private URI base;

    @BeforeEach
    void start() throws Exception
    {
        server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        server.addConnector(connector);
        ServletContextHandler context = new ServletContextHandler();
        context.addFilter(new FilterHolder(new AccessLogFilter(new SimpleMeterRegistry(), true, Redactor::defaults, Tracing.OFF)),
            "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
        context.addServlet(new ServletHolder(new HttpServlet()
        {
            @Override
            protected void doGet(HttpServletRequest request, HttpServletResponse response)
            {
                if (request.getRequestURI().endsWith("/throws"))
                    throw new IllegalArgumentException("an escape the servlet did not expect");
                response.setStatus(HttpServletResponse.SC_NO_CONTENT);
            }
        }), "/*");
        server.setHandler(context);
        server.start();
        base = URI.create("http://127.0.0.1:" + connector.getLocalPort());
    }

    @AfterEach
    void stop() throws Exception
    {
        server.stop();
    }

    @Test
    void exceptionEscapingTheServlet_isLoggedAsTheClientsServerError() throws Exception
    {
        try (LogCapture log = LogCapture.accessLog())
        {
            HttpResponse<String> answer = get("/throws");

            assertEquals(500, answer.statusCode());
            await().until(log::lines, hasItem(containsString("/throws")));
            String line = log.lines().stream().filter(l -> l.contains("/throws")).findFirst().orElseThrow();
            assertThat(line, containsString(" 500 "));
        }
    }

    @Test
    void answeredRequest_isLoggedWithItsOwnStatus() throws Exception
    {
        try (LogCapture log = LogCapture.accessLog())
        {
            assertEquals(204, get("/fine").statusCode());
            await().until(log::lines, hasItem(containsString("/fine")));
            String line = log.lines().stream().filter(l -> l.contains("/fine")).findFirst().orElseThrow();
            assertThat(line, containsString(" 204 "));
        }
    }

    private HttpResponse<String> get(String path) throws Exception
    {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(base.resolve(path)).build(), HttpResponse.BodyHandlers.ofString());
    }
}
