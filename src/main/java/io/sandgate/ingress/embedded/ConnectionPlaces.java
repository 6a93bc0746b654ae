package io.sandgate.ingress.embedded;

import java.nio.channels.SelectableChannel;

import org.eclipse.jetty.io.SelectorManager;

/**
 * A connection limit that holds a place for each connection it admits at accept: the place comes
 * back when the connection closes, or when its accept failed after it was counted.
 */
interface ConnectionPlaces extends SelectorManager.AcceptListener
{
    /** Gives the connection's place back; harmless for one never admitted, or given back already. */
    void release(SelectableChannel channel);

    @Override
    default void onAcceptFailed(SelectableChannel channel, Throwable cause)
    {
        release(channel);
    }

    @Override
    default void onClosed(SelectableChannel channel)
    {
        release(channel);
    }
}
