package io.sandgate.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay between the gateway's Redis client and a real {@code redis-server}, which lets a test
 * decide when the client hears what Redis already did: replies to commands can be held back while
 * subscriptions keep flowing (so a keyspace event overtakes the reply of a read made before the
 * write), and every connection can be cut and refused for a while (so writes happen that the client
 * cannot hear of), all without touching the server.
 *
 * <p>A connection counts as a subscription once the client sent a {@code SUBSCRIBE} of any kind on
 * it; what it carries is never held.</p>
 */
public final class RedisRelay implements AutoCloseable
{
    private static final String SUBSCRIBE = "SUBSCRIBE";

    private final ServerSocket listener;
    private final int redisPort;
    private final List<Link> links = new CopyOnWriteArrayList<>();
    private final Thread acceptor;
    /** Guarded by {@code this}. */
    private boolean holding;
    private volatile boolean cut;

    private RedisRelay(int redisPort) throws IOException
    {
        this.redisPort = redisPort;
        listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = daemon(this::accept, "redis-relay-accept");
        acceptor.start();
    }

    /** A relay to the Redis on this port of 127.0.0.1; it follows a restart on the same port. */
    public static RedisRelay start(int redisPort) throws IOException
    {
        return new RedisRelay(redisPort);
    }

    /** The address in the form Redisson expects, for {@code store.redis.address}. */
    public String address()
    {
        return "redis://127.0.0.1:" + listener.getLocalPort();
    }

    /** From now on replies to commands reach the client only after {@link #releaseReplies()}. */
    public synchronized void holdReplies()
    {
        holding = true;
    }

    /** Lets every held reply through, in the order each connection received them. */
    public synchronized void releaseReplies()
    {
        holding = false;
        notifyAll();
    }

    /**
     * Closes every connection and refuses new ones until {@link #restore()}, as a partition between
     * the gateway and Redis would: the client sees its connections drop and cannot reconnect.
     */
    public void cutOff()
    {
        cut = true;
        links.forEach(Link::close);
    }

    /** Accepts connections again. */
    public void restore()
    {
        cut = false;
    }

    @Override
    public void close() throws IOException
    {
        listener.close();
        links.forEach(Link::close);
        releaseReplies();
    }

    private void accept()
    {
        while (!listener.isClosed())
        {
            Socket client;
            try
            {
                client = listener.accept();
            }
            catch (IOException x)
            {
                return;
            }
            if (cut)
            {
                closeQuietly(client);
                continue;
            }
            Socket server = new Socket();
            try
            {
                server.setTcpNoDelay(true);
                client.setTcpNoDelay(true);
                server.connect(new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, 1}), redisPort), 5000);
            }
            catch (IOException x)
            {
                // Redis is down: the client meets a refused connection, as it would without us.
                closeQuietly(server);
                closeQuietly(client);
                continue;
            }
            Link link = new Link(client, server);
            links.add(link);
            link.start();
        }
    }

    private synchronized void awaitRelease(Link link) throws InterruptedException
    {
        while (holding && !link.subscriber && !link.closed)
            wait();
    }

    private static Thread daemon(Runnable job, String name)
    {
        Thread thread = new Thread(job, name);
        thread.setDaemon(true);
        return thread;
    }

    private static void closeQuietly(Socket socket)
    {
        try
        {
            socket.close();
        }
        catch (IOException x)
        {
            // Closing is all we wanted; it is closed either way.
        }
    }

    /** One client connection and its own connection to Redis. */
    private final class Link
    {
        private final Socket client;
        private final Socket server;
        private volatile boolean subscriber;
        private volatile boolean closed;

        Link(Socket client, Socket server)
        {
            this.client = client;
            this.server = server;
        }

        void start()
        {
            daemon(this::commands, "redis-relay-up").start();
            daemon(this::replies, "redis-relay-down").start();
        }

        private void commands()
        {
            byte[] buffer = new byte[8192];
            // The tail of the previous read, so that a command name split across reads is still seen.
            String carried = "";
            try (InputStream in = client.getInputStream(); OutputStream out = server.getOutputStream())
            {
                for (int n; (n = in.read(buffer)) >= 0; )
                {
                    if (!subscriber)
                    {
                        String seen = carried + new String(buffer, 0, n, StandardCharsets.ISO_8859_1).toUpperCase(Locale.ROOT);
                        subscriber = seen.contains(SUBSCRIBE);
                        carried = seen.substring(Math.max(0, seen.length() - SUBSCRIBE.length()));
                    }
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
            catch (IOException x)
            {
                // Either side closed: the link is over.
            }
            close();
        }

        private void replies()
        {
            byte[] buffer = new byte[8192];
            try (InputStream in = server.getInputStream(); OutputStream out = client.getOutputStream())
            {
                for (int n; (n = in.read(buffer)) >= 0; )
                {
                    awaitRelease(this);
                    out.write(buffer, 0, n);
                    out.flush();
                }
            }
            catch (IOException | InterruptedException x)
            {
                // Either side closed: the link is over.
            }
            close();
        }

        void close()
        {
            closed = true;
            closeQuietly(client);
            closeQuietly(server);
            links.remove(this);
            synchronized (RedisRelay.this)
            {
                RedisRelay.this.notifyAll();
            }
        }
    }
}
