package io.sandgate.ingress;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.LocalConnector;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link BrowserConnection} on a real Jetty server over its in-memory connector, where a test
 * decides exactly which bytes each read finds: a head split between reads, parsed on, then handed
 * to Jetty's connection. The handler answers with the class of the connection that served it.
 */
class BrowserConnectionTest
{
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private Server server;
    private LocalConnector connector;

    @BeforeEach
    void start() throws Exception
    {
        server = new Server();
        Handler handler = new Handler.Abstract.NonBlocking()
        {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception
            {
                if (request.getHttpURI().getPath().startsWith("/declined") && request.getConnectionMetaData().getConnection() instanceof BrowserConnection)
                    return false;
                String body = Content.Source.asString(request, StandardCharsets.ISO_8859_1);
                String answer = request.getConnectionMetaData().getConnection().getClass().getSimpleName() + " " + request.getMethod() + " "
                    + request.getHttpURI().getPathQuery() + " [" + body + "]";
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain");
                response.write(true, ByteBuffer.wrap(answer.getBytes(StandardCharsets.ISO_8859_1)), callback);
                return true;
            }
        };
        HttpConnectionFactory http = new HttpConnectionFactory(new HttpConfiguration());
        connector = new LocalConnector(server, null, null, null, -1, new BrowserConnection.Factory(handler, http, registry), http);
        server.addConnector(connector);
        server.setHandler(handler);
        server.start();
    }

    @AfterEach
    void stop() throws Exception
    {
        server.stop();
    }

    @Test
    void plainGets_areServedByTheGatewaysConnection_oneAfterAnother() throws Exception
    {
        LocalConnector.LocalEndPoint endPoint = connector.connect();
        endPoint.addInput("GET /a?n=1 HTTP/1.1\r\nHost: gw\r\n\r\nGET /b HTTP/1.1\r\nHost: gw\r\n\r\n");

        String first = endPoint.getResponse();
        String second = endPoint.getResponse();

        assertTrue(first.contains("BrowserConnection GET /a?n=1 []"), first);
        assertTrue(second.contains("BrowserConnection GET /b []"), second);
        assertEquals(0, handovers());
    }

    /**
     * The head's first bytes are read, parsed and kept; the rest arrives in a later read and says the
     * request has a body: Jetty's connection gets the request from its first byte.
     */
    @Test
    void aHeadSplitBetweenReads_isHandedOverWhole() throws Exception
    {
        LocalConnector.LocalEndPoint endPoint = connector.connect();
        endPoint.addInput("POST /upload?x=1 HTTP/1.1\r\nHost: gw\r\n");
        await().atMost(5, TimeUnit.SECONDS).until(() -> !endPoint.hasMore());
        endPoint.addInput("Content-Length: 3\r\n\r\nabc");

        String answer = endPoint.getResponse();

        assertTrue(answer.startsWith("HTTP/1.1 200"), answer);
        assertTrue(answer.contains("HttpConnection POST /upload?x=1 [abc]"), answer);
        assertEquals(1, registry.get("sandgate.ingress.handovers").tag("reason", "body").counter().count());
    }

    /** A GET split the same way is served by the gateway's connection, and the next one after it. */
    @Test
    void aGetSplitBetweenReads_isServed() throws Exception
    {
        LocalConnector.LocalEndPoint endPoint = connector.connect();
        endPoint.addInput("GET /split HTTP/1.1\r\nHo");
        await().atMost(5, TimeUnit.SECONDS).until(() -> !endPoint.hasMore());
        endPoint.addInput("st: gw\r\n\r\nGET /next HTTP/1.1\r\nHost: gw\r\n\r\n");

        String first = endPoint.getResponse();
        String second = endPoint.getResponse();

        assertTrue(first.contains("BrowserConnection GET /split []"), first);
        assertTrue(second.contains("BrowserConnection GET /next []"), second);
        assertEquals(0, handovers());
    }

    /** A request the handler declines goes to Jetty's connection with its bytes; so does every request after it. */
    @Test
    void aDeclinedRequest_andTheOnesAfterIt_areJettys() throws Exception
    {
        LocalConnector.LocalEndPoint endPoint = connector.connect();
        endPoint.addInput("GET /first HTTP/1.1\r\nHost: gw\r\n\r\nGET /declined HTTP/1.1\r\nHost: gw\r\n\r\nGET /after HTTP/1.1\r\nHost: gw\r\n\r\n");

        String first = endPoint.getResponse();
        String declined = endPoint.getResponse();
        String after = endPoint.getResponse();

        assertTrue(first.contains("BrowserConnection GET /first"), first);
        assertTrue(declined.contains("HttpConnection GET /declined"), declined);
        assertTrue(after.contains("HttpConnection GET /after"), after);
        assertEquals(1, registry.get("sandgate.ingress.handovers").tag("reason", "not-ingress").counter().count());
    }

    /** A head that fills the read buffer before it ends is Jetty's to refuse. */
    @Test
    void aHeadLongerThanTheBuffer_isJettysToRefuse() throws Exception
    {
        LocalConnector.LocalEndPoint endPoint = connector.connect();
        endPoint.addInput("GET /long HTTP/1.1\r\nHost: gw\r\nX-Long: " + "a".repeat(9000));
        await().atMost(5, TimeUnit.SECONDS).until(() -> !endPoint.hasMore());
        endPoint.addInput("\r\n\r\n");

        String answer = endPoint.getResponse();

        assertTrue(answer.startsWith("HTTP/1.1 431"), answer);
        double handedOver = registry.get("sandgate.ingress.handovers").tag("reason", "long-head").counter().count()
            + registry.get("sandgate.ingress.handovers").tag("reason", "malformed").counter().count();
        assertEquals(1, handedOver);
    }

    /** A HEAD's answer says its length and carries no body; the connection serves the next request. */
    @Test
    void head_hasItsLengthAndNoBody() throws Exception
    {
        LocalConnector.LocalEndPoint endPoint = connector.connect();
        endPoint.addInput("HEAD /h HTTP/1.1\r\nHost: gw\r\n\r\nGET /g HTTP/1.1\r\nHost: gw\r\nConnection: close\r\n\r\n");

        endPoint.waitUntilClosed();
        String both = endPoint.takeOutputString();

        assertTrue(both.startsWith("HTTP/1.1 200"), both);
        assertTrue(both.contains("Content-Length: " + "BrowserConnection HEAD /h []".length()), both);
        assertTrue(!both.contains("HEAD /h ["), "no body for a HEAD: " + both);
        assertTrue(both.contains("BrowserConnection GET /g []"), both);
        assertTrue(both.contains("Connection: close"), both);
    }

    private double handovers()
    {
        return registry.find("sandgate.ingress.handovers").counters().stream().mapToDouble(c -> c.count()).sum();
    }
}
