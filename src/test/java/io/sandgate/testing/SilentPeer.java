package io.sandgate.testing;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A peer that hangs: it accepts every TCP connection on 127.0.0.1 and never reads or writes, as a
 * wedged sandbox or egress node would. Connections stay open until {@link #close()}.
 */
public final class SilentPeer implements AutoCloseable
{
    private final ServerSocket socket;
    private final List<Socket> accepted = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    private SilentPeer(int backlog) throws IOException
    {
        socket = new ServerSocket(0, backlog, InetAddress.getLoopbackAddress());
        acceptor = new Thread(this::accept, "silent-peer");
        acceptor.start();
    }

    /** @param backlog connections the kernel may queue before they are accepted: at least as many as a test opens at once */
    public static SilentPeer start(int backlog) throws IOException
    {
        return new SilentPeer(backlog);
    }

    private void accept()
    {
        while (!socket.isClosed())
        {
            try
            {
                accepted.add(socket.accept());
            }
            catch (IOException x)
            {
                return;
            }
        }
    }

    public int port()
    {
        return socket.getLocalPort();
    }

    /** {@code 127.0.0.1:<port>}. */
    public String address()
    {
        return "127.0.0.1:" + port();
    }

    /** Connections accepted so far. */
    public int accepted()
    {
        return accepted.size();
    }

    @Override
    public void close() throws IOException, InterruptedException
    {
        socket.close();
        acceptor.join();
        for (Socket connection : accepted)
            connection.close();
    }
}
