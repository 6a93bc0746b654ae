package io.sandgate.ingress.websocket;

import java.io.IOException;

import io.sandgate.web.GatewayException;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.EndPoint;

/**
 * How a browser's connection becomes a tunnel's browser leg once the sandbox has answered 101: the
 * browser gets its own 101 with the sandbox's answer, then its connection carries bytes only.
 */
public interface BrowserUpgrade
{
    /**
     * Jetty's own connection switch where Jetty's classes are the gateway's own: in the embedded
     * runner, and in a Jetty distribution that shows its classes to the webapp. Elsewhere (Tomcat)
     * the standard servlet upgrade.
     */
    static BrowserUpgrade forThisContainer()
    {
        try
        {
            Class<?> exchange = Class.forName("org.eclipse.jetty.ee10.servlet.ServletContextRequest", false, BrowserUpgrade.class.getClassLoader());
            // The server's endpoints must be the very class the tunnel's legs are built on.
            if (Class.forName(EndPoint.class.getName(), false, exchange.getClassLoader()) == EndPoint.class)
                return new JettyBrowserUpgrade();
        }
        catch (ClassNotFoundException | LinkageError x)
        {
            // Not Jetty, or a Jetty that keeps its classes from the webapp.
        }
        return ServletLeg.UPGRADE;
    }

    /**
     * Refuses, before the sandbox is asked, an upgrade this container cannot carry out.
     *
     * @throws GatewayException 501
     */
    default void checkSupported(HttpServletRequest request)
    {
    }

    /**
     * The container's buffer pool, for the tunnel's reads to come from the same pool as its
     * connections'; null where the container does not show it, and the bridge's client's serves.
     */
    default ByteBufferPool buffers(HttpServletRequest request)
    {
        return null;
    }

    /**
     * Answers the browser 101 with {@link Tunnel#answer} and hands its connection to the tunnel,
     * which starts once the connection is its own.
     */
    void upgrade(HttpServletRequest request, HttpServletResponse response, Tunnel tunnel) throws IOException, ServletException;
}
