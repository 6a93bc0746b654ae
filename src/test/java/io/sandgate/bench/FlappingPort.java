package io.sandgate.bench;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A loopback port in front of a target that goes down and comes back: while up it relays every
 * connection, byte for byte, to the target's port (TLS passes through untouched, so the target's
 * certificate is what the client sees); while down nothing listens, so a connect is refused, and
 * the connections that were open are cut. A target that flaps this way is the target's failure,
 * whichever node the request came through.
 */
final class FlappingPort implements AutoCloseable
{
    /** When the port stopped listening and when it listened again, in {@link System#nanoTime()}; up is 0 while still down. */
    record Outage(long down, long up)
    {
        boolean overlaps(long from, long to)
        {
            return down <= to && (up == 0 || up >= from);
        }
    }

    private final int targetPort;
    private final int port;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final List<Outage> outages = new ArrayList<>();
    private final ExecutorService threads = Executors.newCachedThreadPool(runnable ->
    {
        Thread thread = new Thread(runnable, "flapping-port");
        thread.setDaemon(true);
        return thread;
    });
    private ServerSocket listener;

    private FlappingPort(int targetPort) throws IOException
    {
        this.targetPort = targetPort;
        listener = listen(0);
        port = listener.getLocalPort();
        accept(listener);
    }

    /** Starts up, relaying to {@code 127.0.0.1:targetPort}. */
    static FlappingPort start(int targetPort) throws IOException
    {
        return new FlappingPort(targetPort);
    }

    int port()
    {
        return port;
    }

    /** Stops listening and cuts the open connections. */
    synchronized void down()
    {
        if (listener == null)
            return;
        closeQuietly(listener);
        listener = null;
        open.forEach(FlappingPort::closeQuietly);
        outages.add(new Outage(System.nanoTime(), 0));
    }

    /** Listens again on the same port. */
    synchronized void up()
    {
        if (listener != null)
            return;
        try
        {
            listener = listen(port);
        }
        catch (IOException e)
        {
            throw new UncheckedIOException("cannot listen on port " + port + " again", e);
        }
        accept(listener);
        Outage last = outages.remove(outages.size() - 1);
        outages.add(new Outage(last.down(), System.nanoTime()));
    }

    /** Whether the port was down at any moment between the two {@link System#nanoTime()} readings. */
    synchronized boolean downDuring(long from, long to)
    {
        for (Outage outage : outages)
        {
            if (outage.overlaps(from, to))
                return true;
        }
        return false;
    }

    /** Forgets past outages, for the next run of the same schedule. */
    synchronized void resetOutages()
    {
        outages.clear();
        if (listener == null)
            outages.add(new Outage(System.nanoTime(), 0));
    }

    @Override
    public synchronized void close()
    {
        down();
        threads.shutdownNow();
    }

    private static ServerSocket listen(int port) throws IOException
    {
        ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 128);
        return socket;
    }

    private void accept(ServerSocket socket)
    {
        threads.execute(() ->
        {
            while (!socket.isClosed())
            {
                try
                {
                    Socket client = socket.accept();
                    relay(client);
                }
                catch (IOException e)
                {
                    // Closed by down(): this listener's loop ends.
                }
            }
        });
    }

    private void relay(Socket client)
    {
        Socket server = new Socket();
        open.add(client);
        open.add(server);
        threads.execute(() ->
        {
            try
            {
                server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 2000);
                threads.execute(() -> pump(server, client));
                pump(client, server);
            }
            catch (IOException e)
            {
                closeQuietly(client);
                closeQuietly(server);
            }
        });
    }

    /** Copies until either side ends, then closes both, as a dropped connection does. */
    private void pump(Socket from, Socket to)
    {
        byte[] buffer = new byte[16 * 1024];
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream())
        {
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer))
            {
                out.write(buffer, 0, n);
                out.flush();
            }
        }
        catch (IOException e)
        {
            // Cut by down() or by the peer: both ends are closed below.
        }
        finally
        {
            closeQuietly(from);
            closeQuietly(to);
            open.remove(from);
            open.remove(to);
        }
    }

    private static void closeQuietly(AutoCloseable closeable)
    {
        try
        {
            closeable.close();
        }
        catch (Exception e)
        {
            // Already closed.
        }
    }
}
