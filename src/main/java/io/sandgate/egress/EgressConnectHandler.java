package io.sandgate.egress;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.function.Supplier;

import io.sandgate.config.EgressConfig;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ConnectHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;

/**
 * Forward-proxy mode of the embedded runner, for tools that only speak {@code HTTPS_PROXY}: a
 * CONNECT to the gateway is planned like a base-URL request by the {@link EgressPlanner} (route by
 * host and {@code X-Agent-Task-Type}, SSRF guard) and tunnelled through a node chosen by health,
 * region and stickiness, with a CONNECT of its own to the checked address. A node that refuses is
 * followed by another as the {@link FailurePolicy} allows.
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
        EgressPlan plan;
        try
        {
            plan = face.planner().planTunnel(host, port, name -> request.getHeaders().get(name));
        }
        catch (GatewayException x)
        {
            promise.failed(x);
            return;
        }
        Attempts attempts = face.start(plan);
        while (attempts.next())
        {
            try
            {
                SocketChannel channel = tunnel(attempts.node().node(), plan);
                attempts.record(FailurePolicy.Outcome.OK);
                promise.succeeded(channel);
                return;
            }
            catch (IOException x)
            {
                FailurePolicy.Verdict verdict = face.policy().judge(FailurePolicy.Attempt.tunnel(x, attempts.count(), plan.route()));
                attempts.record(verdict.outcome());
                if (!verdict.retry())
                    break;
            }
        }
        promise.failed(face.policy().tunnelFailed());
    }

    /** Opens a tunnel through the node: CONNECT to the checked address, expect 2xx, hand over the raw channel. */
    private static SocketChannel tunnel(EgressConfig.Node node, EgressPlan plan) throws IOException
    {
        SocketChannel channel = SocketChannel.open();
        try
        {
            int timeout = (int)plan.timeouts().connect().toMillis();
            channel.socket().connect(new InetSocketAddress(node.host(), node.port()), timeout);
            channel.socket().setSoTimeout(timeout);
            OutputStream out = channel.socket().getOutputStream();
            out.write(plan.target().connectRequestHead());
            out.flush();
            String status = readResponseHead(channel.socket().getInputStream());
            String[] parts = status.split(" ", 3);
            if (parts.length < 2 || !isSuccess(parts[1]))
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

    private static boolean isSuccess(String status)
    {
        try
        {
            return HttpStatus.isSuccess(Integer.parseInt(status));
        }
        catch (NumberFormatException x)
        {
            return false;
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
        int status = failure instanceof GatewayException g ? g.status() : HttpStatus.BAD_GATEWAY_502;
        Response.writeError(request, response, callback, status, failure instanceof GatewayException ? failure.getMessage() : "egress failed");
    }
}
