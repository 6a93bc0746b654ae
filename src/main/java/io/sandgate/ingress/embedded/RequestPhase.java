package io.sandgate.ingress.embedded;

/**
 * Where a client's connection is between its requests, as the connection limit
 * ({@link ServerConnectionLimit}) and the head deadline ({@link HeadTimeout}) judge it
 * ({@link ClientEndPoint#phase()}).
 */
public enum RequestPhase
{
    /** Between requests, or nothing received yet: closed now, the client loses no request. */
    AWAITING,
    /** A request's head is arriving, not yet whole. */
    HEAD,
    /** A request is served, or the connection is no HTTP/1 one any more (a WebSocket, a tunnel): never closed for waiting. */
    BUSY
}
