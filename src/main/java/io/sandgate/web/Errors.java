package io.sandgate.web;

import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.channels.UnresolvedAddressException;
import java.util.Locale;
import java.util.concurrent.TimeoutException;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.core.StoreUnavailableException;
import io.sandgate.leak.Redactor;
import io.sandgate.net.SsrfGuard;
import jakarta.servlet.ServletContext;
import jakarta.servlet.http.HttpServletMapping;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.client.HttpResponseException;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;

/**
 * The one place where failures become HTTP statuses and bodies. Bodies are short JSON
 * ({@code {"status":404,"error":"not_found","message":"..."}}) or a small HTML page for a browser
 * navigating; neither ever includes an exception message from below, which could name an internal
 * address, and anything in a message shaped like a secret is written as {@code [REDACTED]}. A face
 * whose protocol has its own error shape (MCP's JSON-RPC) words the body through {@link Body}. Every
 * error carries {@link NoScript}'s headers: no page of the gateway's may host a script.
 */
public final class Errors
{
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Messages may quote a host or path an agent sent; anything shaped like a secret is not echoed. */
    private static final Redactor REDACT = Redactor.defaults();
    /** Context attributes naming the body writer of a servlet, by servlet name. */
    private static final String BODY_OF = Errors.class.getName() + ".body:";
    private static final String NO_STORE = "no-store";
    private static final String BEARER_CHALLENGE = "Bearer realm=\"sandgate\"";
    private static final HttpFields ERROR_HEADERS = HttpFields.build().put(HttpHeader.CACHE_CONTROL, NO_STORE).add(NoScript.FIELDS).asImmutable();
    private static final HttpFields UNAUTHORIZED_HEADERS = HttpFields.build(ERROR_HEADERS).put(HttpHeader.WWW_AUTHENTICATE, BEARER_CHALLENGE).asImmutable();

    private Errors()
    {
    }

    /**
     * Who is on the far side of a failed exchange, as the client is told: an egress timeout talks
     * about the target or its node, never about a sandbox.
     */
    public enum Peer
    {
        SANDBOX("the sandbox"),
        MCP_SERVER("the MCP server"),
        EGRESS("the target or its egress node");

        private final String words;

        Peer(String words)
        {
            this.words = words;
        }
    }

    /** Maps a failure of the ingress face to what the client is told. */
    public static GatewayException map(Throwable failure)
    {
        return map(failure, Peer.SANDBOX);
    }

    /** Maps any failure to what the client is told, naming the peer the way its face speaks of it. */
    public static GatewayException map(Throwable failure, Peer peer)
    {
        for (Throwable t = failure; t != null; t = t.getCause())
        {
            if (t instanceof GatewayException g)
                return g;
            if (t instanceof SsrfGuard.Refused refused)
                return switch (refused.reason())
                {
                    case UNRESOLVED -> new GatewayException(HttpStatus.BAD_GATEWAY_502, "target_unresolved", refused.getMessage());
                    case MALFORMED, NON_CANONICAL -> GatewayException.badRequest(refused.getMessage());
                    default -> GatewayException.forbidden(refused.getMessage());
                };
            if (t instanceof StoreUnavailableException)
                return new GatewayException(HttpStatus.SERVICE_UNAVAILABLE_503, "store_unavailable",
                    peer == Peer.SANDBOX ? "route store unavailable and route not cached; retry shortly" : "the gateway's store is unavailable; retry shortly");
            if (t instanceof TimeoutException)
                return new GatewayException(HttpStatus.GATEWAY_TIMEOUT_504, "upstream_timeout", peer.words + " did not answer in time");
            // The client could not take the answer: not HTTP, or a head beyond what it reads.
            if (t instanceof HttpResponseException)
                return new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_failed", "the exchange with " + peer.words + " failed");
            if (t instanceof ConnectException || t instanceof NoRouteToHostException
                || t instanceof UnresolvedAddressException || t instanceof UnknownHostException)
                return new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_unreachable", peer.words + " refused or could not be reached");
        }
        if (failure instanceof IOException)
            return new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_failed", "the exchange with " + peer.words + " failed");
        return new GatewayException(HttpStatus.INTERNAL_SERVER_ERROR_500, "internal_error", "internal error");
    }

    /**
     * What the client is told when a lower layer has only a status to report (Jetty's proxy
     * servlet hands its own failures over as 403, 408, 500, 502 or 504).
     */
    public static GatewayException ofStatus(int status)
    {
        return ofStatus(status, Peer.SANDBOX);
    }

    /** As {@link #ofStatus(int)}, naming the peer the way its face speaks of it. */
    public static GatewayException ofStatus(int status, Peer peer)
    {
        return switch (status)
        {
            case HttpStatus.FORBIDDEN_403 -> GatewayException.forbidden(peer == Peer.SANDBOX ? "the sandbox address is not allowed" : "the upstream address is not allowed");
            case HttpStatus.REQUEST_TIMEOUT_408 -> new GatewayException(HttpStatus.REQUEST_TIMEOUT_408, "client_timeout", "the request body did not arrive in time");
            case HttpStatus.BAD_GATEWAY_502 -> new GatewayException(HttpStatus.BAD_GATEWAY_502, "upstream_failed", "the exchange with " + peer.words + " failed");
            case HttpStatus.GATEWAY_TIMEOUT_504 -> new GatewayException(HttpStatus.GATEWAY_TIMEOUT_504, "upstream_timeout", peer.words + " did not answer in time");
            default -> new GatewayException(status >= 400 && status < 600 ? status : HttpStatus.INTERNAL_SERVER_ERROR_500, "internal_error", "internal error");
        };
    }

    /**
     * Writes the body of an error in the shape a face's protocol expects. The status, headers and
     * redacted message stay decided here; the writer only words them.
     */
    @FunctionalInterface
    public interface Body
    {
        /**
         * @param message the error's message, already redacted
         */
        void write(HttpServletRequest request, HttpServletResponse response, GatewayException error, String message) throws IOException;
    }

    /**
     * Errors answered for requests mapped to the named servlet, by the servlet or by a filter in
     * front of it (the per-client limit), get that servlet's body instead of the gateway's JSON or HTML.
     */
    public static void body(ServletContext context, String servletName, Body body)
    {
        context.setAttribute(BODY_OF + servletName, body);
    }

    /** The header a challenge goes in: a proxy's own ({@code Proxy-Authenticate}) for a 407, {@code WWW-Authenticate} otherwise. */
    public static HttpHeader challengeHeader(GatewayException error)
    {
        return error.status() == HttpStatus.PROXY_AUTHENTICATION_REQUIRED_407 ? HttpHeader.PROXY_AUTHENTICATE : HttpHeader.WWW_AUTHENTICATE;
    }

    /** Writes the error unless the response is already committed, in which case there is nothing left to say. */
    public static void write(HttpServletRequest request, HttpServletResponse response, GatewayException error) throws IOException
    {
        if (response.isCommitted())
            return;
        response.resetBuffer();
        response.setStatus(error.status());
        response.setHeader(HttpHeader.CACHE_CONTROL.asString(), NO_STORE);
        NoScript.set(response);
        if (error.challenge() != null)
            response.setHeader(challengeHeader(error).asString(), error.challenge());
        else if (error.status() == HttpStatus.UNAUTHORIZED_401)
            response.setHeader(HttpHeader.WWW_AUTHENTICATE.asString(), BEARER_CHALLENGE);
        if (error.retryAfterSeconds() > 0)
            response.setHeader(HttpHeader.RETRY_AFTER.asString(), Long.toString(error.retryAfterSeconds()));
        Body body = bodyOf(request);
        if (body != null)
        {
            body.write(request, response, error, REDACT.text(error.getMessage()));
            return;
        }
        Reply reply = reply(error, request.getHeader(HttpHeader.ACCEPT.asString()));
        response.setContentType(reply.contentType());
        response.getWriter().write(reply.body());
    }

    /**
     * An error as the gateway's own JSON or HTML, for a front-end outside the servlet API: it sends
     * {@link #headers} with it.
     *
     * @param accept the request's Accept header, or null
     */
    public static Reply reply(GatewayException error, String accept)
    {
        String message = REDACT.text(error.getMessage());
        if (accept != null && accept.toLowerCase(Locale.ROOT).contains("text/html"))
        {
            // A refusal that passes with time reloads itself then, with no script (the page's CSP forbids it).
            String refresh = error.retryAfterSeconds() > 0 ? "<meta http-equiv=\"refresh\" content=\"" + error.retryAfterSeconds() + "\">" : "";
            return new Reply("text/html;charset=utf-8", "<!doctype html>" + refresh + "<title>" + error.status() + "</title><h1>" + error.status() + " "
                + escape(error.code()) + "</h1><p>" + escape(message) + "</p>");
        }
        return new Reply("application/json", JSON.createObjectNode()
            .put("status", error.status()).put("error", error.code()).put("message", message).toString());
    }

    /**
     * The headers every error carries besides its body's: never stored, no script ({@link NoScript}),
     * a challenge with a 401, when to retry a refusal over a limit.
     */
    public static HttpFields headers(GatewayException error)
    {
        if (error.retryAfterSeconds() > 0)
            return HttpFields.build(ERROR_HEADERS).put(HttpHeader.RETRY_AFTER, Long.toString(error.retryAfterSeconds()));
        return error.status() == HttpStatus.UNAUTHORIZED_401 ? UNAUTHORIZED_HEADERS : ERROR_HEADERS;
    }

    /**
     * @param contentType the body's type, charset included
     * @param body the body, short
     */
    public record Reply(String contentType, String body)
    {
    }

    private static Body bodyOf(HttpServletRequest request)
    {
        HttpServletMapping mapping = request.getHttpServletMapping();
        if (mapping == null || mapping.getServletName() == null)
            return null;
        return request.getServletContext().getAttribute(BODY_OF + mapping.getServletName()) instanceof Body body ? body : null;
    }

    private static String escape(String text)
    {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
