package io.sandgate.ingress.embedded;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Stream;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.ScriptedSandbox;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Answers a sandbox may give but a well-behaved server rarely does (a 304 with the length of the
 * body it does not carry, a 204 or 304 followed by bytes, heads near the size the server's head
 * buffer starts at): each reaches the browser as an answer, the sandbox's or the gateway's 502, and
 * after any but a 502 the request pipelined behind it is answered too. A front-end of the gateway's
 * own once ended the connection on several, without a status line, and took the pipelined request
 * with it.
 */
class OddSandboxAnswersIT
{
    private static ScriptedSandbox sandbox;
    /** The sandbox's answer to the request under test; every other request gets {@code next}. */
    private static volatile String answer;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("ingress.static-routes", Map.of("7", sandbox.hostPort())));

    @BeforeAll
    static void start() throws Exception
    {
        sandbox = ScriptedSandbox.start((request, out) -> request.requestLine().contains("/next")
            ? ScriptedSandbox.ok(out, "next")
            : ScriptedSandbox.raw(out, answer));
    }

    @AfterAll
    static void stop() throws Exception
    {
        sandbox.close();
    }

    static Stream<Arguments> answers()
    {
        return Stream.of(
            Arguments.of("a plain 200", "GET", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\n\r\nhello"),
            Arguments.of("304 with the length of the body it has not", "GET", "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nContent-Length: 1234\r\n\r\n"),
            Arguments.of("304 with a length of 0", "GET", "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nContent-Length: 0\r\n\r\n"),
            Arguments.of("204 with a length", "GET", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"),
            Arguments.of("204 with a length, then bytes", "GET", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\nstray"),
            Arguments.of("304 with a length, then bytes", "GET", "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\nstray"),
            Arguments.of("204, then bytes", "GET", "HTTP/1.1 204 No Content\r\n\r\nstray"),
            Arguments.of("304, then bytes", "GET", "HTTP/1.1 304 Not Modified\r\n\r\nstray"),
            Arguments.of("304, chunked", "GET", "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Arguments.of("head of 7.9 KB", "GET", head(7_900)),
            Arguments.of("head of 8.0 KB", "GET", head(8_000)),
            Arguments.of("head of 8.1 KB", "GET", head(8_100)),
            Arguments.of("head of 8 KiB", "GET", head(8_192)),
            Arguments.of("head of 12 KB", "GET", head(12_000)),
            Arguments.of("head of 64 KB", "GET", head(64_000)),
            Arguments.of("HEAD, a length and no body", "HEAD", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1234\r\n\r\n"),
            Arguments.of("HEAD, chunked and no body", "HEAD", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"),
            Arguments.of("HEAD, 304 with a length", "HEAD", "HTTP/1.1 304 Not Modified\r\nContent-Length: 1234\r\n\r\n"),
            Arguments.of("HEAD, 204 with a length", "HEAD", "HTTP/1.1 204 No Content\r\nContent-Length: 5\r\n\r\n"),
            Arguments.of("HEAD, head of 8.0 KB", "HEAD", head(8_000)),
            Arguments.of("HEAD, a length, then the body anyway", "HEAD", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"),
            Arguments.of("HEAD, 304, then bytes", "HEAD", "HTTP/1.1 304 Not Modified\r\n\r\nstray"),
            Arguments.of("205 with a length", "GET", "HTTP/1.1 205 Reset Content\r\nContent-Length: 3\r\n\r\nabc"),
            Arguments.of("200 with a length of 0", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"),
            Arguments.of("200 chunked, with trailers", "GET", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\nX-T: 1\r\n\r\n"),
            Arguments.of("304 chunked, then a chunk", "GET", "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n"),
            Arguments.of("a signed length", "GET", "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok"),
            Arguments.of("a length twice, the same", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok"),
            Arguments.of("a length as a list", "GET", "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok"),
            Arguments.of("status 600", "GET", "HTTP/1.1 600 Odd\r\nContent-Length: 2\r\n\r\nok"),
            Arguments.of("head of 8.15 KB", "GET", head(8_150)));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("answers")
    void anOddSandboxAnswer_reachesTheBrowser_andThePipelinedRequestToo(String name, String method, String sandboxAnswer) throws Exception
    {
        answer = sandboxAnswer;

        List<Answer> answers = exchange(method);

        int status = answers.get(0).status();
        assertTrue(status == 502 || sandboxAnswer.startsWith("HTTP/1.1 " + status + " "), "the sandbox's status or the gateway's 502: " + answers);
        // A bad answer (a 204 that says a length) is the gateway's 502, after which the connection does not go on.
        if (status != 502)
            assertEquals(new Answer(200, "next"), answers.get(1), "the request pipelined behind it is answered");
    }

    /**
     * The request under test and one pipelined behind it, in one write, as a browser that pipelines
     * sends them, and the answers to both, as far as the connection carries them.
     */
    private static List<Answer> exchange(String method) throws IOException
    {
        String host = "Host: localhost:" + gateway.port() + "\r\n";
        String first = method + " /vnc/7/under-test HTTP/1.1\r\n" + host + "\r\n";
        String next = "GET /vnc/7/next HTTP/1.1\r\n" + host + "Connection: close\r\n\r\n";
        List<Answer> answers = new ArrayList<>();
        try (Socket socket = socket())
        {
            socket.getOutputStream().write((first + next).getBytes(StandardCharsets.ISO_8859_1));
            InputStream in = socket.getInputStream();
            answers.add(read(in, method));
            if (answers.get(0).status() > 0)
                answers.add(read(in, "GET"));
        }
        return answers;
    }

    /** Whether the answer has a body follows RFC 9112, 6.3: none to a HEAD, none with 1xx, 204 or 304. */
    private static Answer read(InputStream in, String method) throws IOException
    {
        String head = head(in);
        if (head == null)
            return new Answer(-1, "the connection ended without an answer");
        String[] lines = head.split("\r\n");
        int status = Integer.parseInt(lines[0].split(" ")[1]);
        if ("HEAD".equals(method) || status == 204 || status == 304)
            return new Answer(status, "");
        String length = null;
        boolean chunked = false;
        for (String line : lines)
        {
            String lower = line.toLowerCase(Locale.ROOT);
            if (lower.startsWith("content-length:"))
                length = line.substring(line.indexOf(':') + 1).trim();
            else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked"))
                chunked = true;
        }
        if (chunked)
            return new Answer(status, dechunk(in));
        if (length != null)
            return new Answer(status, new String(in.readNBytes(Integer.parseInt(length)), StandardCharsets.UTF_8));
        return new Answer(status, new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }

    private static String dechunk(InputStream in) throws IOException
    {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true)
        {
            int size = Integer.parseInt(line(in).split(";")[0].trim(), 16);
            if (size == 0)
            {
                while (!line(in).isEmpty())
                {
                    // trailers, dropped
                }
                return body.toString(StandardCharsets.UTF_8);
            }
            body.write(in.readNBytes(size));
            line(in);
        }
    }

    /** The head up to its blank line; null if the connection ends first. */
    private static String head(InputStream in) throws IOException
    {
        StringBuilder head = new StringBuilder();
        while (!head.toString().endsWith("\r\n\r\n"))
        {
            int b = in.read();
            if (b < 0)
                return null;
            head.append((char)b);
        }
        return head.toString();
    }

    private static String line(InputStream in) throws IOException
    {
        StringBuilder line = new StringBuilder();
        for (int b = in.read(); b != '\n'; b = in.read())
        {
            if (b < 0)
                throw new IOException("the connection ended within a chunked body");
            if (b != '\r')
                line.append((char)b);
        }
        return line.toString();
    }

    /** A sandbox's 200 whose head, status line to blank line, is {@code size} bytes. */
    private static String head(int size)
    {
        String start = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Big: ";
        String end = "\r\n\r\n";
        return start + "a".repeat(size - start.length() - end.length()) + end + "ok";
    }

    private static Socket socket() throws IOException
    {
        Socket socket = new Socket("127.0.0.1", gateway.port());
        socket.setSoTimeout(10_000);
        return socket;
    }

    /** An answer as the browser reads it; -1 for a connection that ended without one. */
    private record Answer(int status, String body)
    {
    }
}
