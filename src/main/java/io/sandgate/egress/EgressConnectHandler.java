package io.sandgate.egress;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

import io.sandgate.config.EgressConfig;
import io.sandgate.net.SsrfGuard;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ConnectHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;

/**
 * Forward-proxy mode of the embedded runner, for tools that only speak {@code HTTPS_PROXY}: a
 * CONNECT to the gateway is routed like a base-URL request (route by host and
 * {@code X-Agent-Task-Type}, node by health, region and stickiness) and tunnelled through the
 * chosen egress node with a CONNECT of its own. A node that refuses is tried no more than the
 * route's retry count allows, each time another node.
 */
public final class EgressConnectHandler extends ConnectHandler
{
    private static final int MAX_RESPONSE_HEAD = 8192;

    private final Supplier<Egress> egress;

    public EgressConnectHandler(Supplier<Egress> egress, Handler next)
    {
        super(next);
        this.egress = egress;
    }

    @Override
    protected void connectToServer(Request request, String host, int port, Promise<SocketChannel> promise)
    {
        Egress face = egress.get();
        if (face == null)
        {
            promise.failed(GatewayException.unavailable("gateway starting"));
            return;
        }
        String taskType = request.getHeaders().get(EgressServlet.TASK_TYPE);
        Optional<EgressConfig.Route> route = face.route(host, taskType);
        if (route.isEmpty())
        {
            promise.failed(GatewayException.forbidden("no egress route for " + host));
            return;
        }
        if (route.get().credential().isPresent())
        {
            // Inside a TLS tunnel nothing can be injected or checked.
            promise.failed(GatewayException.forbidden("routes with a credential need base-URL mode: /egress/" + host + "/..."));
            return;
        }
        PinnedTarget pinned;
        try
        {
            pinned = PinnedTarget.check(face.guard(), "https", host, port);
        }
        catch (SsrfGuard.Refused x)
        {
            promise.failed(Errors.map(x, Errors.Peer.EGRESS));
            return;
        }
        face.requestStarted();
        String sticky = request.getHeaders().get(EgressServlet.SESSION);
        Set<String> tried = new HashSet<>();
        for (int attempt = 0; attempt <= route.get().retry(); attempt++)
        {
            if (attempt > 0 && !face.allowRetry())
                break;
            Egress.Choice choice = face.choose(route.get(), sticky, tried);
            if (choice == null)
                break;
            NodeState node = choice.node();
            tried.add(node.node().id());
            try
            {
                SocketChannel channel = tunnel(node.node(), pinned, face.config());
                face.recordResult(route.get().pool(), node, "ok", true);
                promise.succeeded(channel);
                return;
            }
            catch (IOException x)
            {
                face.recordResult(route.get().pool(), node, "node_failure", false);
            }
        }
        promise.failed(new GatewayException(502, "egress_node_failed", "no egress node opened the tunnel"));
    }

    /** Opens a tunnel through the node: CONNECT to the checked address, expect 2xx, hand over the raw channel. */
    private static SocketChannel tunnel(EgressConfig.Node node, PinnedTarget target, EgressConfig config) throws IOException
    {
        SocketChannel channel = SocketChannel.open();
        try
        {
            int timeout = (int)config.connectTimeout().toMillis();
            channel.socket().connect(new InetSocketAddress(node.host(), node.port()), timeout);
            channel.socket().setSoTimeout(timeout);
            OutputStream out = channel.socket().getOutputStream();
            out.write(target.connectRequestHead());
            out.flush();
            String status = readResponseHead(channel.socket().getInputStream());
            String[] parts = status.split(" ", 3);
            if (parts.length < 2 || !parts[1].startsWith("2"))
                throw new IOException("egress node refused the tunnel: " + (parts.length > 1 ? parts[1] : "?"));
            channel.socket().setSoTimeout(0);
            channel.configureBlocking(false);
            return channel;
        }
        catch (IOException | RuntimeException x)
        {
            channel.close();
            throw x instanceof IOException io ? io : new IOException(x);
        }
    }

    /** Reads the node's response head byte by byte: nothing after it may be consumed from the tunnel. */
    private static String readResponseHead(InputStream in) throws IOException
    {
        StringBuilder head = new StringBuilder();
        while (head.length() < MAX_RESPONSE_HEAD)
        {
            int b = in.read();
            if (b < 0)
                throw new IOException("egress node closed the tunnel");
            head.append((char)b);
            int n = head.length();
            if (n >= 4 && head.charAt(n - 4) == '\r' && head.charAt(n - 3) == '\n' && head.charAt(n - 2) == '\r' && head.charAt(n - 1) == '\n')
                return head.substring(0, head.indexOf("\r\n"));
        }
        throw new IOException("egress node answered with an oversized head");
    }

    @Override
    protected void onConnectFailure(Request request, Response response, Callback callback, Throwable failure)
    {
        int status = failure instanceof GatewayException g ? g.status() : 502;
        Response.writeError(request, response, callback, status, failure instanceof GatewayException ? failure.getMessage() : "egress failed");
    }
}
