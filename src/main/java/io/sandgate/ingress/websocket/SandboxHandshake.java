package io.sandgate.ingress.websocket;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.sandgate.web.GatewayException;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.HttpUpgrader;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.util.Callback;

/**
 * Opens a tunnel's sandbox leg: the browser's WebSocket handshake, replayed to the sandbox with the
 * gateway's own headers through the gateway's HTTP client (its connect and answer timeouts, its
 * sockets). A 101 whose accept value answers the browser's key turns the client's connection into an
 * {@link EndPointLeg} that reads nothing yet; any other answer is the sandbox refusing. The client
 * performs the switch itself (its upgrade protocol handler hands the endpoint to this upgrader), so
 * the bytes the sandbox sent right behind its 101 are kept.
 */
final class SandboxHandshake implements HttpUpgrader.Factory, HttpUpgrader, Response.CompleteListener
{
    /** RFC 6455 section 1.3. */
    private static final String ACCEPT_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

    /** The sandbox's answer, and its connection, now a tunnel leg. */
    record Opened(EndPointLeg leg, Tunnel.Answer answer)
    {
    }

    private final CompletableFuture<Opened> opened = new CompletableFuture<>();
    private final HttpClient client;
    private final String key;
    private final List<String> offeredProtocols;
    private final Duration idleTimeout;

    private SandboxHandshake(HttpClient client, String key, List<String> offeredProtocols, Duration idleTimeout)
    {
        this.client = client;
        this.key = key;
        this.offeredProtocols = offeredProtocols;
        this.idleTimeout = idleTimeout;
    }

    /**
     * @param headers the upgrade request's headers, the browser's key, version, subprotocols and
     *        extensions among them
     * @param timeout for connecting and the sandbox's answer together
     * @param idleTimeout of the leg once open
     * @return the open leg, or fails with why not: a {@link GatewayException} when the sandbox refused,
     *         or the client's failure (timeout, refused connection)
     */
    static CompletableFuture<Opened> open(HttpClient client, URI target, HttpFields headers, Duration timeout, Duration idleTimeout)
    {
        List<String> offered = headers.getCSV(HttpHeader.SEC_WEBSOCKET_SUBPROTOCOL, false);
        SandboxHandshake handshake = new SandboxHandshake(client, headers.get(HttpHeader.SEC_WEBSOCKET_KEY), offered, idleTimeout);
        Request request = client.newRequest(target)
            .method(HttpMethod.GET)
            .version(HttpVersion.HTTP_1_1)
            .timeout(timeout.toMillis(), TimeUnit.MILLISECONDS)
            .headers(fields -> fields.add(headers))
            .attribute(HttpUpgrader.Factory.class.getName(), handshake);
        request.send(handshake);
        return handshake.opened;
    }

    @Override
    public HttpUpgrader newHttpUpgrader(HttpVersion version)
    {
        return this;
    }

    /** The request already carries every header of the handshake. */
    @Override
    public void prepare(Request request)
    {
    }

    @Override
    public void upgrade(Response response, EndPoint endPoint, Callback callback)
    {
        HttpFields answer = response.getHeaders();
        String accept = answer.get(HttpHeader.SEC_WEBSOCKET_ACCEPT);
        String protocol = answer.get(HttpHeader.SEC_WEBSOCKET_SUBPROTOCOL);
        if (!answer.contains(HttpHeader.CONNECTION, "upgrade") || !accept(key).equals(accept) || (protocol != null && !offeredProtocols.contains(protocol)))
        {
            GatewayException refused = refused();
            callback.failed(refused);
            opened.completeExceptionally(refused);
            return;
        }
        List<String> extensions = answer.getValuesList(HttpHeader.SEC_WEBSOCKET_EXTENSIONS);
        // Nothing to do once installed: the leg reads only when its tunnel starts.
        EndPointLeg leg = new EndPointLeg(endPoint, client.getExecutor(), installed ->
        {
        });
        endPoint.setIdleTimeout(idleTimeout.toMillis());
        endPoint.upgrade(leg);
        callback.succeeded();
        opened.complete(new Opened(leg, new Tunnel.Answer(accept, protocol, extensions.isEmpty() ? null : String.join(", ", extensions))));
    }

    /** Called only when the client did not switch: a failure, or an answer other than 101. */
    @Override
    public void onComplete(Result result)
    {
        opened.completeExceptionally(result.isFailed() ? result.getFailure() : refused());
    }

    private static GatewayException refused()
    {
        return new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_refused", "the sandbox refused the WebSocket");
    }

    /** The accept value for a key (RFC 6455 section 4.2.2). */
    static String accept(String key)
    {
        try
        {
            byte[] digest = MessageDigest.getInstance("SHA-1").digest((key + ACCEPT_GUID).getBytes(StandardCharsets.ISO_8859_1));
            return Base64.getEncoder().encodeToString(digest);
        }
        catch (NoSuchAlgorithmException x)
        {
            throw new IllegalStateException("SHA-1 is a required algorithm of every Java platform", x);
        }
    }
}
