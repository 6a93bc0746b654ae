package io.sandgate.testing;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A sandbox on a raw socket that answers as its test scripts it, byte for byte: what a well-behaved
 * HTTP server never does (close a kept connection as the next request arrives, answer before the
 * body, say {@code Connection: close} and stay open) is what a gateway's connection handling must
 * survive. It records each request it reads, with its body de-chunked, and the connection it came on.
 */
public final class ScriptedSandbox implements AutoCloseable
{
    /** What the sandbox does with one request. */
    public interface Script
    {
        /**
         * @param request the request as read, with its connection's number and its place on it (from 1)
         * @param out the connection's output, for the answer's bytes
         * @return whether to read another request on this connection; false closes it
         */
        boolean answer(Received request, OutputStream out) throws IOException;
    }

    /** One request as read. */
    public record Received(int connection, int number, String head, byte[] body)
    {
        public String requestLine()
        {
            return head.substring(0, head.indexOf("\r\n"));
        }

        /** The first value of a header, or null. */
        public String header(String name)
        {
            for (String line : head.split("\r\n"))
            {
                int colon = line.indexOf(':');
                if (colon > 0 && line.substring(0, colon).trim().equalsIgnoreCase(name))
                    return line.substring(colon + 1).trim();
            }
            return null;
        }
    }

    private final ServerSocket server;
    private final ExecutorService threads = Executors.newCachedThreadPool();
    private final AtomicInteger connections = new AtomicInteger();
    private final AtomicInteger closedByPeer = new AtomicInteger();
    private final List<Received> received = new CopyOnWriteArrayList<>();
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private volatile Script script;

    private ScriptedSandbox(Script script) throws IOException
    {
        this.script = script;
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        threads.execute(this::accept);
    }

    public static ScriptedSandbox start(Script script) throws IOException
    {
        return new ScriptedSandbox(script);
    }

    /** A plain answer with a length, on a connection kept open. */
    public static boolean ok(OutputStream out, String body) throws IOException
    {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: " + bytes.length + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(bytes);
        out.flush();
        return true;
    }

    /** Bytes as written, an answer's or anything else, on a connection kept open. */
    public static boolean raw(OutputStream out, String bytes) throws IOException
    {
        out.write(bytes.getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return true;
    }

    public void script(Script next)
    {
        script = next;
    }

    public String hostPort()
    {
        return "127.0.0.1:" + server.getLocalPort();
    }

    public int connections()
    {
        return connections.get();
    }

    /** Connections the gateway closed between requests, as the sandbox read their end. */
    public int closedByPeer()
    {
        return closedByPeer.get();
    }

    public List<Received> received()
    {
        return List.copyOf(received);
    }

    private void accept()
    {
        while (!server.isClosed())
        {
            try
            {
                Socket socket = server.accept();
                sockets.add(socket);
                int number = connections.incrementAndGet();
                threads.execute(() -> serve(socket, number));
            }
            catch (IOException x)
            {
                return;
            }
        }
    }

    private void serve(Socket socket, int connection)
    {
        try (socket)
        {
            InputStream in = socket.getInputStream();
            OutputStream out = socket.getOutputStream();
            for (int number = 1; ; number++)
            {
                String head = readHead(in);
                if (head == null)
                {
                    closedByPeer.incrementAndGet();
                    return;
                }
                Received request = new Received(connection, number, head, null);
                request = new Received(connection, number, head, readBody(in, request));
                received.add(request);
                if (!script.answer(request, out))
                    return;
            }
        }
        catch (IOException x)
        {
            // The gateway went away; nothing to answer.
        }
    }

    private static String readHead(InputStream in) throws IOException
    {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4)
        {
            int b = in.read();
            if (b < 0)
                return null;
            head.write(b);
            matched = (b == '\r' && (matched == 0 || matched == 2)) || (b == '\n' && (matched == 1 || matched == 3)) ? matched + 1 : 0;
        }
        return head.toString(StandardCharsets.ISO_8859_1);
    }

    private static byte[] readBody(InputStream in, Received request) throws IOException
    {
        String length = request.header("Content-Length");
        if (length != null)
            return in.readNBytes(Integer.parseInt(length));
        String encoding = request.header("Transfer-Encoding");
        if (encoding == null || !encoding.toLowerCase(Locale.ROOT).contains("chunked"))
            return new byte[0];
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        while (true)
        {
            String size = readLine(in);
            int n = Integer.parseInt(size.split(";")[0].trim(), 16);
            if (n == 0)
            {
                // Trailers, if any, then the blank line.
                while (!readLine(in).isEmpty())
                {
                    // skipped
                }
                return body.toByteArray();
            }
            body.write(in.readNBytes(n));
            readLine(in);
        }
    }

    private static String readLine(InputStream in) throws IOException
    {
        StringBuilder line = new StringBuilder();
        int b;
        while ((b = in.read()) >= 0 && b != '\n')
        {
            if (b != '\r')
                line.append((char)b);
        }
        return line.toString();
    }

    @Override
    public void close() throws IOException
    {
        server.close();
        for (Socket socket : sockets)
            socket.close();
        threads.shutdownNow();
    }
}
