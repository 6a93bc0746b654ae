package io.sandgate.testing;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A deliberately tiny RESP2 client over a plain socket.
 *
 * <p>The gateway talks to Redis through Redisson; tests that want to prove the gateway reacts to
 * writes made by <em>any</em> Redis client (an operator's {@code redis-cli}, another service) must
 * not go through Redisson themselves, or they would only prove Redisson agrees with itself. This
 * class shares no code or codec with Redisson for that reason.
 *
 * <p>Not thread-safe beyond {@link #command} being serialized: one connection carries one
 * request/reply conversation at a time.
 */
public final class RawRedis implements AutoCloseable
{
    private static final int TIMEOUT_MILLIS = 5_000;

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    /** First error reply met while parsing the current reply; see {@link #command}. */
    private IllegalStateException pendingError;

    private RawRedis(Socket socket) throws IOException
    {
        this.socket = socket;
        this.in = new BufferedInputStream(socket.getInputStream());
        this.out = new BufferedOutputStream(socket.getOutputStream());
    }

    /**
     * Connects to a Redis on 127.0.0.1.
     *
     * <p>Throws the checked {@link IOException} (unlike {@link #command}) because a refused
     * connection is something tests routinely assert on, e.g. {@code ConnectException} after the
     * server has been killed.
     */
    public static RawRedis connect(int port) throws IOException
    {
        // A literal IPv4 address, not the loopback name: the test server binds 127.0.0.1 only, and
        // the JVM may resolve "localhost" to ::1 first.
        InetSocketAddress address =
                new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), port);
        Socket socket = new Socket();
        try
        {
            socket.setTcpNoDelay(true);
            socket.setSoTimeout(TIMEOUT_MILLIS);
            socket.connect(address, TIMEOUT_MILLIS);
            return new RawRedis(socket);
        }
        catch (IOException | RuntimeException e)
        {
            socket.close();
            throw e;
        }
    }

    /**
     * Sends one command and returns its reply: simple string and bulk string as {@link String}
     * (null bulk as {@code null}), integer as {@link Long}, array as {@code List<Object>}.
     *
     * @throws IllegalStateException carrying the server's message if the reply is, or contains, an
     *     error
     * @throws UncheckedIOException if the connection fails or the reply is malformed
     */
    public synchronized Object command(String... args)
    {
        if (args.length == 0)
        {
            throw new IllegalArgumentException("a Redis command needs at least its name");
        }
        try
        {
            writeCommand(args);
            pendingError = null;
            Object reply = readReply();
            // The error is thrown only once the whole reply is consumed: an error nested inside an
            // array (e.g. from EXEC) must not leave the rest of the array unread, or the next
            // command on this connection would read stale bytes as its reply.
            if (pendingError != null)
            {
                IllegalStateException error = pendingError;
                pendingError = null;
                throw error;
            }
            return reply;
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("Redis command " + args[0] + " failed", e);
        }
    }

    /** Returns the number of fields newly created (0 if the field existed and was overwritten). */
    public long hset(String key, String field, String value)
    {
        return asLong(command("HSET", key, field, value));
    }

    /** Returns the number of fields removed. */
    public long hdel(String key, String field)
    {
        return asLong(command("HDEL", key, field));
    }

    /** Returns the field's value, or {@code null} if the key or field does not exist. */
    public String hget(String key, String field)
    {
        return (String) command("HGET", key, field);
    }

    private static final Pattern CALLS = Pattern.compile("cmdstat_([\\w|]+):calls=(\\d+)");

    /**
     * Calls of {@code command} (lower case, as {@code INFO commandstats} names it) since the server
     * started, or of every command but {@code info} itself when {@code command} is null.
     */
    public long calls(String command)
    {
        long calls = 0;
        Matcher m = CALLS.matcher(String.valueOf(command("INFO", "commandstats")));
        while (m.find())
        {
            if (command == null ? !m.group(1).equals("info") : m.group(1).equals(command))
                calls += Long.parseLong(m.group(2));
        }
        return calls;
    }

    /**
     * Returns the value of one configuration parameter, or {@code null} if Redis knows no such
     * parameter. Meant for exact names; for a glob matching several parameters the result is the
     * value whose name equals {@code param}, i.e. usually {@code null}.
     */
    public String configGet(String param)
    {
        List<?> pairs = (List<?>) command("CONFIG", "GET", param);
        if (pairs.size() == 2)
        {
            // Redis may answer under a canonical name rather than the alias that was asked for.
            return (String) pairs.get(1);
        }
        for (int i = 0; i + 1 < pairs.size(); i += 2)
        {
            if (param.equalsIgnoreCase((String) pairs.get(i)))
            {
                return (String) pairs.get(i + 1);
            }
        }
        return null;
    }

    @Override
    public void close()
    {
        try
        {
            socket.close();
        }
        catch (IOException e)
        {
            throw new UncheckedIOException(e);
        }
    }

    private void writeCommand(String[] args) throws IOException
    {
        writeAscii('*' + Integer.toString(args.length) + "\r\n");
        for (String arg : args)
        {
            // The length prefix counts bytes, not chars, so encode first.
            byte[] bytes = arg.getBytes(StandardCharsets.UTF_8);
            writeAscii('$' + Integer.toString(bytes.length) + "\r\n");
            out.write(bytes);
            writeAscii("\r\n");
        }
        out.flush();
    }

    private void writeAscii(String s) throws IOException
    {
        out.write(s.getBytes(StandardCharsets.US_ASCII));
    }

    private Object readReply() throws IOException
    {
        int type = in.read();
        if (type == -1)
        {
            throw new EOFException("connection closed by Redis");
        }
        String line = readLine();
        switch (type)
        {
            case '+':
                return line;
            case '-':
                if (pendingError == null)
                {
                    pendingError = new IllegalStateException(line);
                }
                return null;
            case ':':
                return parseLong(line);
            case '$':
                return readBulk(parseLong(line));
            case '*':
                return readArray(parseLong(line));
            default:
                throw new IOException(
                        "RESP protocol error: unexpected type byte 0x" + Integer.toHexString(type)
                                + " followed by " + line);
        }
    }

    private String readBulk(long length) throws IOException
    {
        if (length < 0)
        {
            return null;
        }
        if (length > Integer.MAX_VALUE)
        {
            throw new IOException("RESP bulk string too large: " + length + " bytes");
        }
        byte[] bytes = in.readNBytes((int) length);
        if (bytes.length < length)
        {
            throw new EOFException("connection closed inside a bulk string");
        }
        expectCrlf();
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private List<Object> readArray(long count) throws IOException
    {
        if (count < 0)
        {
            return null;
        }
        // Not pre-sized from the untrusted count: a corrupt header must fail on read, not on OOM.
        List<Object> elements = new ArrayList<>();
        for (long i = 0; i < count; i++)
        {
            elements.add(readReply());
        }
        return elements;
    }

    /** Reads up to CRLF; bare CR or LF are data, as RESP only terminates on the pair. */
    private String readLine() throws IOException
    {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        boolean sawCr = false;
        while (true)
        {
            int b = in.read();
            if (b == -1)
            {
                throw new EOFException("connection closed inside a reply line");
            }
            if (sawCr && b == '\n')
            {
                return line.toString(StandardCharsets.UTF_8);
            }
            if (sawCr)
            {
                line.write('\r');
            }
            sawCr = b == '\r';
            if (!sawCr)
            {
                line.write(b);
            }
        }
    }

    private void expectCrlf() throws IOException
    {
        int cr = in.read();
        int lf = in.read();
        if (cr != '\r' || lf != '\n')
        {
            throw new IOException("RESP protocol error: bulk string not terminated by CRLF");
        }
    }

    private static long parseLong(String line) throws IOException
    {
        try
        {
            return Long.parseLong(line);
        }
        catch (NumberFormatException e)
        {
            throw new IOException("RESP protocol error: expected an integer, got " + line, e);
        }
    }

    private static long asLong(Object reply)
    {
        if (reply instanceof Long)
        {
            return (Long) reply;
        }
        throw new IllegalStateException("expected an integer reply, got " + reply);
    }
}
