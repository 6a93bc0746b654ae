package io.sandgate.ingress.websocket;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import io.sandgate.web.ClientLimitFilter;
import io.sandgate.web.GatewayException;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpUpgradeHandler;
import jakarta.servlet.http.WebConnection;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A tunnel's browser leg on the standard servlet upgrade ({@link HttpServletRequest#upgrade}): the
 * WAR's on Tomcat. It reads and writes with non-blocking servlet I/O. Public, with a public
 * constructor, because the container creates it.
 *
 * <p>Not on Jetty 12.1 (ee10): its upgraded input of a request without a body reports the end of
 * that body at once, unless the client's next bytes had already arrived, and a browser speaks only
 * after its 101. Jetty gets {@link JettyBrowserUpgrade}, and a Jetty that keeps its classes from the
 * webapp gets 501.</p>
 *
 * <p>The servlet specification has the container call {@link #init} once the servlet has returned;
 * the leg starts when it has both its connection and its tunnel, whichever comes first.</p>
 */
public final class ServletLeg implements HttpUpgradeHandler, Leg
{
    private static final Logger LOG = LoggerFactory.getLogger(ServletLeg.class);

    private final AtomicReference<Callback> readable = new AtomicReference<>();
    /** Data arrived while no read callback was registered: the next registration is answered at once. */
    private final AtomicBoolean readyUnclaimed = new AtomicBoolean();
    private final AtomicReference<Callback> written = new AtomicReference<>();
    private WebConnection connection;
    private Tunnel tunnel;
    private ServletInputStream in;
    private ServletOutputStream out;
    private volatile Throwable failure;

    public ServletLeg()
    {
    }

    /** The standard upgrade: the browser gets the sandbox's answer, and its connection becomes the tunnel's browser leg. */
    static final BrowserUpgrade UPGRADE = new BrowserUpgrade()
    {
        @Override
        public void checkSupported(HttpServletRequest request)
        {
            if (request.getServletContext().getServerInfo().toLowerCase(Locale.ROOT).startsWith("jetty"))
                throw new GatewayException(HttpStatus.NOT_IMPLEMENTED_501, "websocket_unsupported",
                    "this Jetty keeps its classes from the webapp, and its servlet upgrade cannot carry a WebSocket; see Deploying the WAR");
        }

        @Override
        public void upgrade(HttpServletRequest request, HttpServletResponse response, Tunnel tunnel) throws IOException, ServletException
        {
            response.setStatus(HttpServletResponse.SC_SWITCHING_PROTOCOLS);
            tunnel.answer().headers(response::setHeader);
            ServletLeg leg = request.upgrade(ServletLeg.class);
            // A container may keep the upgraded exchange asynchronous until the leg ends: no async
            // timeout may end it, and the client's request count must not hold it.
            if (request.isAsyncStarted())
                request.getAsyncContext().setTimeout(0);
            ClientLimitFilter.streamOpened(request);
            leg.attach(tunnel);
        }
    };

    @Override
    public void init(WebConnection connection)
    {
        join(connection, null);
    }

    private void attach(Tunnel tunnel)
    {
        join(null, tunnel);
    }

    /** Takes the connection or the tunnel; the second of the two to arrive starts the leg. */
    private void join(WebConnection arrivedConnection, Tunnel arrivedTunnel)
    {
        WebConnection c;
        Tunnel t;
        synchronized (this)
        {
            if (arrivedConnection != null)
                connection = arrivedConnection;
            if (arrivedTunnel != null)
                tunnel = arrivedTunnel;
            c = connection;
            t = tunnel;
        }
        if (c != null && t != null)
            start(c, t);
    }

    private void start(WebConnection connection, Tunnel tunnel)
    {
        try
        {
            in = connection.getInputStream();
            out = connection.getOutputStream();
        }
        catch (IOException x)
        {
            LOG.debug("Upgraded connection unusable", x);
            tunnel.abandon();
            close();
            return;
        }
        in.setReadListener(new Reads());
        out.setWriteListener(new Writes());
        tunnel.browserReady(this);
    }

    @Override
    public int fill(ByteBuffer buffer) throws IOException
    {
        Throwable failed = failure;
        if (failed != null)
            throw failed instanceof IOException io ? io : new IOException(failed);
        try
        {
            if (!in.isReady())
                return in.isFinished() ? -1 : 0;
            int n = in.read(buffer.array(), buffer.arrayOffset() + buffer.limit(), buffer.capacity() - buffer.limit());
            if (n > 0)
                buffer.limit(buffer.limit() + n);
            return n;
        }
        catch (IllegalStateException x)
        {
            // A container's word for a stream already closed.
            throw new IOException(x);
        }
    }

    @Override
    public void fillInterested(Callback callback)
    {
        readable.set(callback);
        // Asking is what arms the container's onDataAvailable, when no read has asked already.
        if (readyUnclaimed.getAndSet(false) || isReady())
            wakeReader();
    }

    private boolean isReady()
    {
        try
        {
            return in.isReady();
        }
        catch (IllegalStateException x)
        {
            // Closed: the next read says so.
            return true;
        }
    }

    private void wakeReader()
    {
        Callback callback = readable.getAndSet(null);
        if (callback != null)
            callback.succeeded();
    }

    @Override
    public void write(Callback callback, ByteBuffer buffer)
    {
        boolean handedOver = false;
        try
        {
            out.write(buffer.array(), buffer.arrayOffset() + buffer.position(), buffer.remaining());
            buffer.position(buffer.limit());
            // A container may gather small writes until flushed.
            if (out.isReady())
                out.flush();
            written.set(callback);
            handedOver = true;
            if (out.isReady())
                wakeWriter();
        }
        catch (IOException | IllegalStateException x)
        {
            if (!handedOver || written.compareAndSet(callback, null))
                callback.failed(x);
        }
    }

    private void wakeWriter()
    {
        Callback callback = written.getAndSet(null);
        if (callback != null)
            callback.succeeded();
    }

    @Override
    public boolean direct()
    {
        return false;
    }

    @Override
    public void close()
    {
        WebConnection c;
        synchronized (this)
        {
            c = connection;
        }
        if (c == null)
            return;
        try
        {
            c.close();
        }
        catch (Exception x)
        {
            LOG.debug("Closing the browser connection failed", x);
        }
    }

    @Override
    public void destroy()
    {
        if (failure == null)
            failure = new ClosedChannelException();
        readyUnclaimed.set(true);
        wakeReader();
    }

    private final class Reads implements ReadListener
    {
        @Override
        public void onDataAvailable()
        {
            // Flag first, then claim: a registration racing with this either sees the flag or is claimed.
            readyUnclaimed.set(true);
            Callback callback = readable.getAndSet(null);
            if (callback != null)
            {
                readyUnclaimed.set(false);
                callback.succeeded();
            }
        }

        @Override
        public void onAllDataRead()
        {
            onDataAvailable();
        }

        @Override
        public void onError(Throwable cause)
        {
            failure = cause;
            onDataAvailable();
        }
    }

    private final class Writes implements WriteListener
    {
        @Override
        public void onWritePossible()
        {
            wakeWriter();
        }

        @Override
        public void onError(Throwable cause)
        {
            Callback callback = written.getAndSet(null);
            if (callback != null)
                callback.failed(cause);
        }
    }
}
