package io.sandgate.bench;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The floor for a proxy on the JVM: an HTTP/1.1 keep-alive relay in plain NIO, one selector thread
 * per core, each client connection paired with a backend connection of its own. It reads only what
 * it must to frame a GET and its answer (the end of each head, the answer's {@code Content-Length})
 * and changes no byte. It is not a gateway: no routing, no fields of its own, no limits, no request
 * bodies, and any error closes both legs. Measured beside nginx, it tells how much of the gateway's
 * gap is the JVM moving bytes through the same system calls, and how much is the HTTP work above
 * them (see docs/BENCHMARKS.md, "A bare relay on the JVM").
 *
 * <p>Usage: {@code BareRelay PORT BACKEND_HOST BACKEND_PORT [SELECTORS]}</p>
 */
public final class BareRelay
{
    private static final int BUFFER = 16 * 1024;

    public static void main(String[] args) throws IOException
    {
        int port = Integer.parseInt(args[0]);
        InetSocketAddress backend = new InetSocketAddress(args[1], Integer.parseInt(args[2]));
        int selectors = args.length > 3 ? Integer.parseInt(args[3]) : Runtime.getRuntime().availableProcessors();
        Loop[] loops = new Loop[selectors];
        for (int i = 0; i < selectors; i++)
        {
            loops[i] = new Loop(backend);
            Thread thread = new Thread(loops[i], "relay-" + i);
            thread.start();
        }
        try (ServerSocketChannel server = ServerSocketChannel.open())
        {
            server.bind(new InetSocketAddress("127.0.0.1", port), 4096);
            System.out.println("BareRelay listening on " + port + " for " + backend + " with " + selectors + " selectors");
            for (int next = 0; ; next = (next + 1) % selectors)
            {
                SocketChannel client = server.accept();
                client.setOption(StandardSocketOptions.TCP_NODELAY, true);
                client.configureBlocking(false);
                loops[next].adopt(client);
            }
        }
    }

    private static final class Loop implements Runnable
    {
        private final InetSocketAddress backend;
        private final Selector selector;
        private final ConcurrentLinkedQueue<SocketChannel> incoming = new ConcurrentLinkedQueue<>();

        Loop(InetSocketAddress backend) throws IOException
        {
            this.backend = backend;
            this.selector = Selector.open();
        }

        void adopt(SocketChannel client)
        {
            incoming.add(client);
            selector.wakeup();
        }

        @Override
        public void run()
        {
            while (true)
            {
                try
                {
                    selector.select();
                    for (SocketChannel client; (client = incoming.poll()) != null; )
                        client.register(selector, SelectionKey.OP_READ, new Pair(client));
                    for (Iterator<SelectionKey> keys = selector.selectedKeys().iterator(); keys.hasNext(); )
                    {
                        SelectionKey key = keys.next();
                        keys.remove();
                        Pair pair = (Pair)key.attachment();
                        try
                        {
                            if (key.channel() == pair.client)
                                pair.clientReadable();
                            else
                                pair.backendReadable();
                        }
                        catch (IOException | RuntimeException x)
                        {
                            pair.close();
                        }
                    }
                }
                catch (IOException x)
                {
                    throw new IllegalStateException(x);
                }
            }
        }

        private final class Pair
        {
            private final SocketChannel client;
            private SocketChannel upstream;
            private final ByteBuffer request = ByteBuffer.allocateDirect(BUFFER);
            private final ByteBuffer answer = ByteBuffer.allocateDirect(BUFFER);
            /** Bytes of the current answer still to relay, or -1 while its head is incomplete. */
            private long left = -1;

            Pair(SocketChannel client)
            {
                this.client = client;
            }

            void clientReadable() throws IOException
            {
                if (client.read(request) < 0)
                {
                    close();
                    return;
                }
                int end = headEnd(request);
                if (end < 0)
                {
                    if (!request.hasRemaining())
                        throw new IOException("request head too long");
                    return;
                }
                if (upstream == null)
                {
                    upstream = SocketChannel.open(backend);
                    upstream.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    upstream.configureBlocking(false);
                    upstream.register(selector, SelectionKey.OP_READ, this);
                }
                request.flip();
                int limit = request.limit();
                request.limit(end);
                writeAll(upstream, request);
                request.limit(limit);
                request.compact();
            }

            void backendReadable() throws IOException
            {
                if (upstream.read(answer) < 0)
                {
                    close();
                    return;
                }
                if (left < 0)
                {
                    int end = headEnd(answer);
                    if (end < 0)
                    {
                        if (!answer.hasRemaining())
                            throw new IOException("answer head too long");
                        return;
                    }
                    left = end + contentLength(answer, end);
                }
                answer.flip();
                left -= answer.remaining();
                writeAll(client, answer);
                answer.clear();
                if (left <= 0)
                    left = -1;
            }

            void close()
            {
                try
                {
                    client.close();
                    if (upstream != null)
                        upstream.close();
                }
                catch (IOException ignored)
                {
                    // Closing either way.
                }
            }
        }
    }

    /** Loopback writes of a few KB complete at once; should one not, this spins rather than keeping state. */
    private static void writeAll(SocketChannel channel, ByteBuffer buffer) throws IOException
    {
        while (buffer.hasRemaining())
            channel.write(buffer);
    }

    /** The position after the head's CR LF CR LF among the bytes read so far, or -1. */
    private static int headEnd(ByteBuffer buffer)
    {
        for (int i = 3; i < buffer.position(); i++)
        {
            if (buffer.get(i) == '\n' && buffer.get(i - 1) == '\r' && buffer.get(i - 2) == '\n' && buffer.get(i - 3) == '\r')
                return i + 1;
        }
        return -1;
    }

    private static final byte[] CONTENT_LENGTH = "\r\ncontent-length:".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    /** The answer's Content-Length, read from its head in place: the relay allocates nothing per exchange. */
    private static long contentLength(ByteBuffer buffer, int end)
    {
        for (int at = 0; at + CONTENT_LENGTH.length < end; at++)
        {
            int i = 0;
            while (i < CONTENT_LENGTH.length && (buffer.get(at + i) | 0x20) == (CONTENT_LENGTH[i] | 0x20))
                i++;
            if (i < CONTENT_LENGTH.length)
                continue;
            long length = 0;
            for (int d = at + i; d < end; d++)
            {
                byte b = buffer.get(d);
                if (b >= '0' && b <= '9')
                    length = length * 10 + b - '0';
                else if (b == '\r')
                    return length;
            }
        }
        throw new IllegalStateException("an answer without Content-Length");
    }
}
