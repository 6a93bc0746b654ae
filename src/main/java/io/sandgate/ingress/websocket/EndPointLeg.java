package io.sandgate.ingress.websocket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.Executor;
import java.util.function.Consumer;

import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;

/**
 * A tunnel leg on a Jetty {@link EndPoint}: the connection that replaces HTTP on it once both sides
 * said 101, the sandbox's (from the gateway's client) and, in the embedded runner, the browser's.
 * Bytes that arrived with the handshake are handed over by the connection it replaces and read
 * first.
 */
final class EndPointLeg extends AbstractConnection implements Leg, Connection.UpgradeTo
{
    private final Consumer<EndPointLeg> opened;
    private ByteBuffer handshakeLeftover;

    /**
     * @param opened told once the leg is installed on its endpoint
     */
    EndPointLeg(EndPoint endPoint, Executor executor, Consumer<EndPointLeg> opened)
    {
        super(endPoint, executor);
        this.opened = opened;
    }

    @Override
    public void onUpgradeTo(ByteBuffer buffer)
    {
        // The replaced connection hands over a copy of its own.
        if (BufferUtil.hasContent(buffer))
            handshakeLeftover = buffer;
    }

    @Override
    public void onOpen()
    {
        super.onOpen();
        opened.accept(this);
    }

    @Override
    public int fill(ByteBuffer buffer) throws IOException
    {
        ByteBuffer leftover = handshakeLeftover;
        if (leftover == null)
            return getEndPoint().fill(buffer);
        int n = BufferUtil.append(buffer, leftover);
        if (!leftover.hasRemaining())
            handshakeLeftover = null;
        return n;
    }

    @Override
    public void write(Callback written, ByteBuffer buffer)
    {
        getEndPoint().write(written, buffer);
    }

    @Override
    public boolean direct()
    {
        return true;
    }

    /** Never called: the tunnel's pumps register their own read callbacks. */
    @Override
    public void onFillable()
    {
    }
}
