package io.sandgate.ingress.embedded;

import java.util.concurrent.TimeUnit;

import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.IdleTimeout;
import org.eclipse.jetty.server.internal.HttpConnection;

/**
 * Where a client's HTTP/1 connection is between its requests, read from another thread, as the
 * connection limit ({@link ServerConnectionLimit}) and the head deadline ({@link HeadTimeout}) judge
 * it. It is read from the connection's request parser, whose state Jetty keeps in a volatile field:
 * Jetty's {@code HttpConnection}'s, or that of a connection of the gateway's own that shows its
 * parser ({@link Parsing}) and resets it when an exchange ends, as Jetty's does.
 */
public enum RequestPhase
{
    /** Between requests, or nothing received yet: closed now, the client loses no request. */
    AWAITING,
    /** A request's head is arriving, not yet whole. */
    HEAD,
    /** A request is served, or the connection is no HTTP/1 one any more (a WebSocket, a tunnel): never closed for waiting. */
    BUSY;

    /** A server connection of the gateway's own whose parser says its phase as Jetty's connection's does. */
    public interface Parsing
    {
        /** The parser of its requests: at its start between exchanges, past the head while one is served. */
        HttpParser getParser();
    }

    /** The phase of {@code connection}. */
    public static RequestPhase of(Connection connection)
    {
        HttpParser parser = parser(connection);
        if (parser == null)
            return BUSY;
        // Jetty's connection resets its parser after the exchange, and reads no further while one is served.
        if (connection instanceof HttpConnection http && http.getHttpChannel().getRequest() != null)
            return BUSY;
        if (parser.isStart())
            return AWAITING;
        return parser.inHeaderState() ? HEAD : BUSY;
    }

    /**
     * How long the head the connection is reading has taken so far, by {@link System#nanoTime()}
     * at {@code now}; -1 if it reads none. The parser's start time is read after its state, which
     * Jetty writes after the time: a head seen arriving never shows an earlier request's time.
     */
    public static long headNanos(Connection connection, long now)
    {
        HttpParser parser = parser(connection);
        if (parser == null || of(connection) != HEAD)
            return -1;
        long begin = parser.getBeginNanoTime();
        // Reset since: the head is whole, and no other has begun.
        return begin == 0 ? -1 : Math.max(0, now - begin);
    }

    /**
     * When the connection last received blank lines, while those are all it has received since its
     * last request (RFC 9112, section 2.2, has a server ignore them before a request line); 0 when
     * it has received none, or more. Jetty's parser restarts its clock with each, so this is the
     * last one's time, not the first's.
     */
    public static long paddedNanos(Connection connection)
    {
        HttpParser parser = parser(connection);
        return parser == null || of(connection) != AWAITING ? 0 : parser.getBeginNanoTime();
    }

    /**
     * How long the connection at {@code endPoint} has waited on its client, in milliseconds: since
     * a head's first byte while it arrives, since the last byte while a request is awaited; -1
     * while it is busy.
     */
    public static long waitedMillis(EndPoint endPoint, long now)
    {
        Connection connection = endPoint.getConnection();
        if (of(connection) == AWAITING)
            return endPoint instanceof IdleTimeout idle ? idle.getIdleFor() : 0;
        // Busy by now, if the head has come whole meanwhile.
        long head = headNanos(connection, now);
        return head < 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(head);
    }

    private static HttpParser parser(Connection connection)
    {
        if (connection instanceof HttpConnection http)
            return http.getParser();
        return connection instanceof Parsing parsing ? parsing.getParser() : null;
    }
}
