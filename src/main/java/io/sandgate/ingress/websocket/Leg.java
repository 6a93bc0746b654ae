package io.sandgate.ingress.websocket;

import java.io.IOException;
import java.nio.ByteBuffer;

import org.eclipse.jetty.util.Callback;

/**
 * One connection of a tunnel, as its pumps use it: read what is there without waiting, be told when
 * there is more, write without waiting. Buffers follow Jetty's convention: the bytes are between
 * position and limit, and a fill appends after the limit.
 */
interface Leg
{
    /**
     * @return bytes read (0 when nothing is there yet), or -1 at the end of the stream
     */
    int fill(ByteBuffer buffer) throws IOException;

    /** Succeeds the callback once {@link #fill} has something to give (bytes, the end, or a failure). */
    void fillInterested(Callback readable);

    /** Writes the buffer's bytes, all of them, then succeeds the callback; at most one write at a time. */
    void write(Callback written, ByteBuffer buffer);

    /** Whether the leg reads and writes direct buffers best (a socket) rather than arrays (a servlet stream). */
    boolean direct();

    /** Closes the connection, abruptly if a write is still on its way. */
    void close();
}
