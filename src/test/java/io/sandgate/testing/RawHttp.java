package io.sandgate.testing;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One HTTP/1.1 exchange on a fresh loopback connection, with the request line and headers exactly
 * as given: the {@code Host} a browser would send for {@code 7.sbx.localhost} (no resolver needed),
 * an {@code Origin} of the test's choosing, or a WebSocket handshake whose status is all a test
 * needs. HTTP clients would fill in or forbid these headers.
 *
 * <pre>{@code
 * RawHttp.Response r = RawHttp.get(gateway.port(), "7.sbx.localhost:" + gateway.port(), "/echo", "Cookie", "a=b");
 * }</pre>
 */
public final class RawHttp
{
    private static final int TIMEOUT_MILLIS = 10_000;

    private RawHttp()
    {
    }

    /**
     * @param status the status code
     * @param headers names lower-case, every value in order
     * @param body the body, de-chunked
     */
    public record Response(int status, Map<String, List<String>> headers, String body)
    {
        /** First value, or null. */
        public String header(String name)
        {
            List<String> values = headers.get(name.toLowerCase(Locale.ROOT));
            return values == null ? null : values.get(0);
        }

        public List<String> headers(String name)
        {
            return headers.getOrDefault(name.toLowerCase(Locale.ROOT), List.of());
        }
    }

    /** A GET with {@code Connection: close}; {@code headers} are name, value pairs. */
    public static Response get(int port, String host, String pathAndQuery, String... headers) throws IOException
    {
        return exchange(port, "GET", host, pathAndQuery, List.of(headers), true);
    }

    /** A request of any method with {@code Connection: close}, its head only: a body, if any, is the caller's to declare as empty. */
    public static Response send(int port, String method, String host, String pathAndQuery, String... headers) throws IOException
    {
        return exchange(port, method, host, pathAndQuery, List.of(headers), true);
    }

    /**
     * A WebSocket handshake; answers with the status line and headers only (a 101 leaves the
     * connection open, so nothing is read past the headers, and the connection is then closed).
     */
    public static Response upgrade(int port, String host, String pathAndQuery, String... headers) throws IOException
    {
        List<String> all = new ArrayList<>(List.of("Upgrade", "websocket", "Connection", "Upgrade",
            "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version", "13"));
        all.addAll(List.of(headers));
        return exchange(port, "GET", host, pathAndQuery, all, false);
    }

    /** A connection that stays open for one GET after another, as a browser's does; opened (and accepted) at once. */
    public static final class Kept implements Closeable
    {
        private final Socket socket;
        private final String host;

        public Kept(int port, String host) throws IOException
        {
            this.socket = new Socket("127.0.0.1", port);
            this.host = host;
            socket.setSoTimeout(TIMEOUT_MILLIS);
        }

        public Response get(String pathAndQuery, String... headers) throws IOException
        {
            return send("GET", pathAndQuery, headers);
        }

        /** A request head, and no body: {@link #write} sends what follows it, if anything. */
        public Response send(String method, String pathAndQuery, String... headers) throws IOException
        {
            return exchange(socket, method, host, pathAndQuery, List.of(headers), false);
        }

        /** Bytes as they are, after an answer (the rest of a body the server did not wait for, say). */
        public void write(String bytes) throws IOException
        {
            socket.getOutputStream().write(bytes.getBytes(StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
        }

        /** Whether the peer closes the connection before it sends anything more; a peer that keeps it open past the read timeout fails the read. */
        public boolean closedByPeer() throws IOException
        {
            return socket.getInputStream().read() < 0;
        }

        /** What the peer sends until it closes the connection or goes quiet for the read timeout. */
        public String drain() throws IOException
        {
            ByteArrayOutputStream read = new ByteArrayOutputStream();
            try
            {
                socket.getInputStream().transferTo(read);
            }
            catch (SocketTimeoutException quiet)
            {
                // Open, and nothing more to say.
            }
            return read.toString(StandardCharsets.ISO_8859_1);
        }

        @Override
        public void close() throws IOException
        {
            socket.close();
        }
    }

    private static Response exchange(int port, String method, String host, String pathAndQuery, List<String> headers, boolean close) throws IOException
    {
        try (Socket socket = new Socket("127.0.0.1", port))
        {
            socket.setSoTimeout(TIMEOUT_MILLIS);
            return exchange(socket, method, host, pathAndQuery, headers, close);
        }
    }

    private static Response exchange(Socket socket, String method, String host, String pathAndQuery, List<String> headers, boolean close) throws IOException
    {
        StringBuilder request = new StringBuilder(method).append(' ').append(pathAndQuery).append(" HTTP/1.1\r\nHost: ").append(host).append("\r\n");
        for (int i = 0; i < headers.size(); i += 2)
            request.append(headers.get(i)).append(": ").append(headers.get(i + 1)).append("\r\n");
        if (close)
            request.append("Connection: close\r\n");
        request.append("\r\n");
        OutputStream out = socket.getOutputStream();
        out.write(request.toString().getBytes(StandardCharsets.ISO_8859_1));
        out.flush();
        return read(socket.getInputStream());
    }

    /** The next response on {@code in}, its body read unless it is a 101. */
    public static Response read(InputStream in) throws IOException
    {
        String head = readHead(in);
        String[] lines = head.split("\r\n");
        Map<String, List<String>> parsed = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++)
        {
            int colon = lines[i].indexOf(':');
            if (colon > 0)
                parsed.computeIfAbsent(lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT), k -> new ArrayList<>()).add(lines[i].substring(colon + 1).trim());
        }
        int status = Integer.parseInt(lines[0].split(" ")[1]);
        Response response = new Response(status, parsed, "");
        return status == 101 ? response : new Response(status, parsed, readBody(in, response));
    }

    /**
     * The body of the response on {@code in}, its head read and dropped, chunks decoded as they
     * come: for an event stream read a little at a time, without reading ahead of the caller.
     */
    public static InputStream streamedBody(InputStream in) throws IOException
    {
        return readHead(in).toLowerCase(Locale.ROOT).contains("\r\ntransfer-encoding: chunked\r\n") ? new Dechunked(in) : in;
    }

    /** A chunked body's bytes, read from the connection chunk by chunk. */
    private static final class Dechunked extends InputStream
    {
        private final InputStream in;
        private int left;
        private boolean ended;

        Dechunked(InputStream in)
        {
            this.in = in;
        }

        @Override
        public int read() throws IOException
        {
            byte[] one = new byte[1];
            return read(one, 0, 1) < 0 ? -1 : one[0] & 0xFF;
        }

        @Override
        public int read(byte[] bytes, int offset, int length) throws IOException
        {
            if (ended)
                return -1;
            if (left == 0)
            {
                String size = readLine(in);
                int semicolon = size.indexOf(';');
                left = Integer.parseInt((semicolon < 0 ? size : size.substring(0, semicolon)).trim(), 16);
                if (left == 0)
                {
                    ended = true;
                    return -1;
                }
            }
            int read = in.read(bytes, offset, Math.min(length, left));
            if (read < 0)
                throw new IOException("connection closed within a chunk");
            left -= read;
            if (left == 0)
                readLine(in);
            return read;
        }
    }

    /** By Content-Length, by chunks, or to the end: a refused upgrade keeps its connection open. */
    private static String readBody(InputStream in, Response response) throws IOException
    {
        String length = response.header("Content-Length");
        if (length != null)
            return new String(in.readNBytes(Integer.parseInt(length)), StandardCharsets.UTF_8);
        if (!"chunked".equalsIgnoreCase(response.header("Transfer-Encoding")))
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true)
        {
            String size = readLine(in);
            int semicolon = size.indexOf(';');
            int chunk = Integer.parseInt((semicolon < 0 ? size : size.substring(0, semicolon)).trim(), 16);
            if (chunk == 0)
            {
                // Trailers, if any, and the blank line: the next response on a kept connection starts after them.
                while (!readLine(in).isEmpty())
                {
                    // skipped
                }
                return body.toString(StandardCharsets.UTF_8);
            }
            body.write(in.readNBytes(chunk));
            readLine(in);
        }
    }

    private static String readLine(InputStream in) throws IOException
    {
        StringBuilder line = new StringBuilder();
        for (int b = in.read(); b != '\n'; b = in.read())
        {
            if (b < 0)
                throw new IOException("connection closed within a chunked body");
            if (b != '\r')
                line.append((char)b);
        }
        return line.toString();
    }

    private static String readHead(InputStream in) throws IOException
    {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < end.length)
        {
            int b = in.read();
            if (b < 0)
                throw new IOException("connection closed within the response headers: " + head.toString(StandardCharsets.ISO_8859_1));
            head.write(b);
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }
}
