package io.sandgate.ingress.embedded;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
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
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Fields;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

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
                if (request.getHttpURI().getPath().equals("/answer"))
                    return answer(request, response, callback);
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

    /**
     * What a handler may write, through the gateway's connection (a plain GET or HEAD) and through
     * Jetty's (the same with an empty body): the same status and body on both, and the request
     * behind it answered on both when the first answer keeps the connection. A 304 carries the
     * length of the body it does not have (RFC 9110, 8.6); a head larger than the server's first
     * head buffer is written from a larger one, as Jetty's connection writes it.
     */
    @ParameterizedTest(name = "{0} {1}")
    @CsvSource(delimiter = '|', textBlock = """
        GET  | status=304&length=1234
        GET  | status=304&length=0
        GET  | status=204&length=5
        GET  | status=204
        GET  | status=200&length=5&body=hello
        GET  | status=200&length=5&body=hel
        GET  | status=200&length=2&body=hello
        GET  | status=200&header=12000&body=ok
        GET  | status=200&header=16500&body=ok
        GET  | status=200&header=40000&body=ok
        HEAD | status=200&length=1234
        HEAD | status=304&length=1234
        HEAD | status=200&header=12000&body=ok
        """)
    void whatTheHandlerWrites_reachesTheBrowserAlike_onBothConnections(String method, String query) throws Exception
    {
        String fast = exchange(method + " /answer?" + query + " HTTP/1.1\r\nHost: gw\r\n\r\nGET /answer?status=200&body=next HTTP/1.1\r\nHost: gw\r\n\r\n", "HEAD".equals(method));
        String jetty = exchange(method + " /answer?" + query + " HTTP/1.1\r\nHost: gw\r\nContent-Length: 0\r\n\r\n"
            + "GET /answer?status=200&body=next HTTP/1.1\r\nHost: gw\r\nContent-Length: 0\r\n\r\n", "HEAD".equals(method));

        assertEquals(answers(jetty, method), answers(fast, method));
        assertEquals(1, handovers(), "the second exchange was Jetty's");
    }

    /** Writes the answer the query describes, failing over to a 502 as the ingress handler does when its write fails before anything is committed. */
    private static boolean answer(Request request, Response response, Callback callback)
    {
        Fields query = new Fields();
        for (String pair : request.getHttpURI().getQuery().split("&"))
            query.add(pair.substring(0, pair.indexOf('=')), pair.substring(pair.indexOf('=') + 1));
        response.setStatus(Integer.parseInt(query.getValue("status")));
        if (query.getValue("length") != null)
            response.getHeaders().put(HttpHeader.CONTENT_LENGTH, query.getValue("length"));
        if (query.getValue("header") != null)
            response.getHeaders().put("X-Big", "a".repeat(Integer.parseInt(query.getValue("header"))));
        String body = query.getValue("body") == null ? "" : query.getValue("body");
        response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.ISO_8859_1)), Callback.from(callback::succeeded, x ->
        {
            if (response.isCommitted())
            {
                callback.failed(x);
                return;
            }
            response.reset();
            response.setStatus(502);
            response.write(true, ByteBuffer.wrap("failed".getBytes(StandardCharsets.ISO_8859_1)), callback);
        }));
        return true;
    }

    /** Sends the bytes and reads what comes until the connection closes or goes quiet. */
    private String exchange(String requests, boolean head) throws Exception
    {
        LocalConnector.LocalEndPoint endPoint = connector.connect();
        endPoint.addInput(requests);
        StringBuilder all = new StringBuilder();
        for (int i = 0; i < 2; i++)
        {
            ByteBuffer answer = endPoint.waitForResponse(head && i == 0, 2, TimeUnit.SECONDS);
            if (answer == null)
                break;
            all.append(BufferUtil.toString(answer, StandardCharsets.ISO_8859_1));
        }
        endPoint.close();
        return all.toString();
    }

    /** Each answer's status line and body, the head's other fields (Date among them) left out. */
    private static List<String> answers(String bytes, String method)
    {
        List<String> answers = new ArrayList<>();
        int at = 0;
        boolean first = true;
        while (at < bytes.length())
        {
            int end = bytes.indexOf("\r\n\r\n", at);
            if (end < 0)
            {
                answers.add("partial: " + bytes.substring(at));
                break;
            }
            String head = bytes.substring(at, end);
            String status = head.substring(0, head.indexOf("\r\n") < 0 ? head.length() : head.indexOf("\r\n"));
            int length = 0;
            for (String line : head.split("\r\n"))
            {
                if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:"))
                    length = Integer.parseInt(line.substring(15).trim());
            }
            boolean bodiless = first && "HEAD".equals(method) || status.contains(" 204 ") || status.contains(" 304 ");
            int bodyEnd = Math.min(bytes.length(), end + 4 + (bodiless ? 0 : length));
            answers.add(status + " [" + bytes.substring(end + 4, bodyEnd) + "]");
            at = bodyEnd;
            first = false;
        }
        return answers;
    }

    private double handovers()
    {
        return registry.find("sandgate.ingress.handovers").counters().stream().mapToDouble(c -> c.count()).sum();
    }
}
