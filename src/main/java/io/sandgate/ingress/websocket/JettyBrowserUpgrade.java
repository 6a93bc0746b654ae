package io.sandgate.ingress.websocket;

import java.io.IOException;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.ServletContextRequest;
import org.eclipse.jetty.ee10.servlet.ServletContextResponse;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.HttpStream;
import org.eclipse.jetty.util.FutureCallback;

/**
 * The embedded runner's browser upgrade: Jetty's own connection switch, as its WebSocket server
 * performs it. Once the 101 is written, Jetty replaces the HTTP connection on the browser's endpoint
 * with the tunnel's {@link EndPointLeg}, so the exchange ends there (it no longer counts as a request
 * in progress) and nothing of HTTP stays in memory for the life of the tunnel: no request, no
 * response, no servlet streams between the socket and the pumps.
 *
 * <p>Only where the gateway's Jetty classes are the server's own (see
 * {@link BrowserUpgrade#forThisContainer}): the embedded runner, and a Jetty distribution whose
 * webapp context shows Jetty's classes to the WAR.</p>
 */
final class JettyBrowserUpgrade implements BrowserUpgrade
{
    @Override
    public ByteBufferPool buffers(HttpServletRequest request)
    {
        return ServletContextRequest.getServletContextRequest(request).getComponents().getByteBufferPool();
    }

    @Override
    public void upgrade(HttpServletRequest request, HttpServletResponse response, Tunnel tunnel) throws IOException
    {
        ServletContextRequest exchange = ServletContextRequest.getServletContextRequest(request);
        if (exchange.getConnectionMetaData().getHttpVersion() != HttpVersion.HTTP_1_1)
            throw new IOException("a WebSocket upgrade needs HTTP/1.1");
        EndPoint endPoint = exchange.getConnectionMetaData().getConnection().getEndPoint();
        // Jetty calls the leg's onOpen once it is installed, after the 101 went out.
        EndPointLeg leg = new EndPointLeg(endPoint, exchange.getComponents().getExecutor(), tunnel::browserReady);
        endPoint.setIdleTimeout(tunnel.idleTimeout().toMillis());
        exchange.setAttribute(HttpStream.UPGRADE_CONNECTION_ATTRIBUTE, leg);
        ServletContextResponse answer = exchange.getServletContextResponse();
        answer.setStatus(HttpStatus.SWITCHING_PROTOCOLS_101);
        tunnel.answer().headers(answer.getHeaders()::put);
        // Headers only, into a socket that has just been read from: the write does not wait.
        FutureCallback written = new FutureCallback();
        answer.write(true, null, written);
        written.block();
    }
}
