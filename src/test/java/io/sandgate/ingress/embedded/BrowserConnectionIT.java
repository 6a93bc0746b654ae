package io.sandgate.ingress.embedded;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.SandboxBackend;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The gateway's own HTTP/1 connection for browsers ({@link BrowserConnection}) on the embedded
 * runner's public listener, over raw sockets: the plain requests it serves itself, and every request
 * it must leave to Jetty's connection, which must then answer as it always did. Each hand-over is
 * seen on its counter, so a test fails both if a request that should be served is handed over and
 * if one that should be handed over is served.
 */
class BrowserConnectionIT
{
    private static final String SECRET = "it-secret-0123456789abcdef-0123456789";

    @AutoClose
    private static SandboxBackend sandbox;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("ingress.cookie.secret", SECRET)
        .set("ingress.static-routes", Map.of("37579", sandbox.hostPort())));

    @BeforeAll
    static void start()
    {
        sandbox = SandboxBackend.start("s37579");
    }

    @BeforeEach
    void clear()
    {
        sandbox.clearRequests();
    }

    @Test
    void plainGets_areServedOnTheGatewaysConnection_oneAfterAnotherOnOneConnection() throws Exception
    {
        double before = handovers();
        try (RawHttp.Kept connection = new RawHttp.Kept(gateway.port(), "127.0.0.1"))
        {
            for (int i = 0; i < 3; i++)
            {
                RawHttp.Response answer = connection.get("/vnc/37579/echo?n=" + i, "Accept", "*/*");
                assertEquals(200, answer.status());
                assertTrue(answer.body().contains("path=/echo?n=" + i), answer.body());
                assertEquals(1, answer.headers("date").size(), answer.headers().toString());
            }
        }
        assertEquals(3, sandbox.requestCount());
        assertEquals(before, handovers(), "no request was left to Jetty");
    }

    @Test
    void aHeadSentAByteAtATime_isParsedWhole() throws Exception
    {
        double before = handovers();
        String answers;
        try (Socket socket = socket())
        {
            socket.setTcpNoDelay(true);
            OutputStream out = socket.getOutputStream();
            for (byte b : "GET /vnc/37579/echo?slow=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1))
            {
                out.write(b);
                out.flush();
            }
            answers = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
        assertEquals(List.of("200"), statuses(answers), answers);
        assertTrue(answers.contains("path=/echo?slow=1"), answers);
        assertEquals(before, handovers());
    }

    /** A HEAD's answer has the length of the body it does not carry; the next answer on the connection is read whole after it. */
    @Test
    void head_thenGet_onOneConnection() throws Exception
    {
        double before = handovers();
        String answers = exchange("HEAD /vnc/37579/echo?n=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            + "GET /vnc/37579/echo?n=2 HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");

        assertEquals(List.of("200", "200"), statuses(answers), answers);
        assertFalse(answers.contains("path=/echo?n=1"), "a HEAD answer has no body: " + answers);
        assertTrue(answers.contains("path=/echo?n=2"), answers);
        int second = answers.indexOf("HTTP/1.1 200", 1);
        assertTrue(answers.substring(0, second).toLowerCase().contains("content-length: "), answers);
        assertEquals(before, handovers(), "both served on the gateway's connection");
    }

    @Test
    void connectionClose_isAnsweredAndTheConnectionClosed() throws Exception
    {
        double before = handovers();
        try (Socket socket = socket())
        {
            socket.getOutputStream().write("GET /vnc/37579/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            RawHttp.Response answer = RawHttp.read(socket.getInputStream());
            assertEquals(200, answer.status());
            assertEquals("close", answer.header("connection"));
            assertEquals(-1, socket.getInputStream().read(), "the gateway closes the connection after the answer");
        }
        assertEquals(before, handovers(), "served on the gateway's connection");
    }

    /**
     * What the gateway's connection leaves to Jetty's, and the answer Jetty gives: the smuggling
     * shapes (a length with chunking, two lengths, folded lines), bodies, expectations, other
     * versions, bad Host fields and paths Jetty's compliance judges, heads longer than the buffer,
     * and other faces' paths. None of the refused ones reaches the sandbox.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
        length and chunks     | body        | 400 | 0 | POST /vnc/37579/echo HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Length: 5\\r\\nTransfer-Encoding: chunked\\r\\n\\r\\n0\\r\\n\\r\\n
        two lengths           | body        | 400 | 0 | POST /vnc/37579/echo HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Length: 2\\r\\nContent-Length: 3\\r\\n\\r\\nabc
        a GET with a length   | body        | 200 | 1 | GET /vnc/37579/echo HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\nContent-Length: 2\\r\\n\\r\\nab
        a POST with a body    | body        | 200 | 1 | POST /vnc/37579/echo HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\nContent-Length: 3\\r\\n\\r\\nabc
        a DELETE              | method      | 200 | 1 | DELETE /vnc/37579/echo HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n
        a folded line         | malformed   | 400 | 0 | GET /vnc/37579/echo HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nX-A: a\\r\\n b\\r\\n\\r\\n
        two Hosts             | malformed   | 400 | 0 | GET /vnc/37579/echo HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nHost: evil.example\\r\\n\\r\\n
        no Host               | malformed   | 400 | 0 | GET /vnc/37579/echo HTTP/1.1\\r\\n\\r\\n
        a dot-dot path        | not-ingress | 404 | 0 | GET /vnc/37579/../../etc/passwd HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n
        an encoded slash      | malformed   | 400 | 0 | GET /vnc/37579%2f..%2f41000/ HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n
        an expectation        | expect      | 417 | 0 | GET /vnc/37579/echo HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nExpect: teapot\\r\\nConnection: close\\r\\n\\r\\n
        HTTP/1.0              | version     | 200 | 1 | GET /vnc/37579/echo HTTP/1.0\\r\\nHost: 127.0.0.1\\r\\n\\r\\n
        health                | not-ingress | 200 | 0 | GET /healthz HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nConnection: close\\r\\n\\r\\n
        a WebSocket upgrade   | upgrade     | 403 | 0 | GET /vnc/37579/websockify HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade, close\\r\\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\nSec-WebSocket-Version: 13\\r\\nOrigin: http://evil.example\\r\\n\\r\\n
        """)
    void requestsLeftToJetty_areAnsweredByIt(String name, String reason, int status, int reached, String request) throws Exception
    {
        double before = handovers(reason);

        String answers = exchange(request.replace("\\r\\n", "\r\n"));

        assertEquals(List.of(Integer.toString(status)), statuses(answers).subList(0, 1), answers);
        assertEquals(reached, sandbox.requestCount(), answers);
        assertEquals(before + 1, handovers(reason), "handed over for " + reason);
    }

    @Test
    void aHeadLongerThanTheBuffer_isJettysToRefuse() throws Exception
    {
        double before = handovers("long-head") + handovers("malformed");

        String answers = exchange("GET /vnc/37579/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Long: " + "a".repeat(20_000) + "\r\n\r\n");

        assertEquals("431", statuses(answers).get(0), answers);
        assertEquals(0, sandbox.requestCount());
        assertEquals(before + 1, handovers("long-head") + handovers("malformed"));
    }

    /**
     * A plain GET served by the gateway's connection, then, on the same connection, a request that
     * smuggles a second one inside a length-and-chunks body: the first reaches the sandbox, the
     * second is Jetty's to refuse, and the smuggled request reaches nothing.
     */
    @Test
    void aSmugglingRequestPipelinedAfterAPlainOne_isRefusedAndSmugglesNothing() throws Exception
    {
        String smuggled = "GET /vnc/37579/echo?smuggled=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
        String answers = exchange("GET /vnc/37579/echo?n=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            + "POST /vnc/37579/echo HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nContent-Length: " + (5 + smuggled.length()) + "\r\n\r\n0\r\n\r\n"
            + smuggled);

        assertEquals("200", statuses(answers).get(0), answers);
        assertEquals("400", statuses(answers).get(1), answers);
        assertFalse(answers.contains("smuggled=1"), answers);
        assertEquals(1, sandbox.requestCount());
    }

    /**
     * Sends the bytes and reads until the gateway closes the connection: each case's last request
     * asks for a close, or is one Jetty refuses and closes on. The output is not shut: a browser
     * that shuts its side is one that has gone (BrowserGoneIT).
     */
    private static String exchange(String request) throws IOException
    {
        try (Socket socket = socket())
        {
            socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
            return new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
        }
    }

    private static Socket socket() throws IOException
    {
        Socket socket = new Socket("127.0.0.1", gateway.port());
        socket.setSoTimeout(5000);
        return socket;
    }

    private static List<String> statuses(String answers)
    {
        return Pattern.compile("HTTP/1\\.[01] (\\d{3}) ").matcher(answers).results().map(m -> m.group(1)).toList();
    }

    private static double handovers()
    {
        return registry().find("sandgate.ingress.handovers").counters().stream().mapToDouble(Counter::count).sum();
    }

    private static double handovers(String reason)
    {
        return registry().get("sandgate.ingress.handovers").tag("reason", reason).counter().count();
    }

    private static MeterRegistry registry()
    {
        return gateway.sandgate().metrics();
    }
}
