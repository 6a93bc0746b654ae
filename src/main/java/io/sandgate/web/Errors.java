package io.sandgate.web;

import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.UnknownHostException;
import java.nio.channels.UnresolvedAddressException;
import java.util.Locale;
import java.util.concurrent.TimeoutException;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.leak.Redactor;
import io.sandgate.net.SsrfGuard;
import io.sandgate.core.StoreUnavailableException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * The one place where failures become HTTP statuses and bodies. Bodies are short JSON
 * ({@code {"status":404,"error":"not_found","message":"..."}}) or a small HTML page for a browser
 * navigating; neither ever includes an exception message from below, which could name an internal
 * address, and anything in a message shaped like a secret is written as {@code [REDACTED]}.
 */
public final class Errors
{
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Messages may quote a host or path an agent sent; anything shaped like a secret is not echoed. */
    private static final Redactor REDACT = Redactor.defaults();

    private Errors()
    {
    }

    /** Maps any failure to what the client is told. */
    public static GatewayException map(Throwable failure)
    {
        for (Throwable t = failure; t != null; t = t.getCause())
        {
            if (t instanceof GatewayException g)
                return g;
            if (t instanceof SsrfGuard.Refused refused)
                return switch (refused.reason())
                {
                    case UNRESOLVED -> new GatewayException(502, "target_unresolved", refused.getMessage());
                    case MALFORMED, NON_CANONICAL -> GatewayException.badRequest(refused.getMessage());
                    default -> GatewayException.forbidden(refused.getMessage());
                };
            if (t instanceof StoreUnavailableException)
                return new GatewayException(503, "store_unavailable", "route store unavailable and route not cached; retry shortly");
            if (t instanceof TimeoutException)
                return new GatewayException(504, "upstream_timeout", "the sandbox did not answer in time");
            if (t instanceof ConnectException || t instanceof NoRouteToHostException
                || t instanceof UnresolvedAddressException || t instanceof UnknownHostException)
                return new GatewayException(502, "upstream_unreachable", "the sandbox refused or could not be reached");
        }
        if (failure instanceof IOException)
            return new GatewayException(502, "upstream_failed", "the exchange with the sandbox failed");
        return new GatewayException(500, "internal_error", "internal error");
    }

    /**
     * What the client is told when a lower layer has only a status to report (Jetty's proxy
     * servlet hands its own failures over as 403, 408, 500, 502 or 504).
     */
    public static GatewayException ofStatus(int status)
    {
        return switch (status)
        {
            case 403 -> GatewayException.forbidden("the sandbox address is not allowed");
            case 408 -> new GatewayException(408, "client_timeout", "the request body did not arrive in time");
            case 502 -> new GatewayException(502, "upstream_failed", "the exchange with the sandbox failed");
            case 504 -> new GatewayException(504, "upstream_timeout", "the sandbox did not answer in time");
            default -> new GatewayException(status >= 400 && status < 600 ? status : 500, "internal_error", "internal error");
        };
    }

    /** Writes the error unless the response is already committed, in which case there is nothing left to say. */
    public static void write(HttpServletRequest request, HttpServletResponse response, GatewayException error) throws IOException
    {
        if (response.isCommitted())
            return;
        response.resetBuffer();
        response.setStatus(error.status());
        response.setHeader("Cache-Control", "no-store");
        if (error.status() == 401)
            response.setHeader("WWW-Authenticate", "Bearer realm=\"sandgate\"");
        if (wantsHtml(request))
        {
            response.setContentType("text/html;charset=utf-8");
            response.getWriter().write("<!doctype html><title>" + error.status() + "</title><h1>" + error.status() + " "
                + escape(error.code()) + "</h1><p>" + escape(REDACT.text(error.getMessage())) + "</p>");
        }
        else
        {
            response.setContentType("application/json");
            response.getWriter().write(JSON.createObjectNode()
                .put("status", error.status()).put("error", error.code()).put("message", REDACT.text(error.getMessage())).toString());
        }
    }

    private static boolean wantsHtml(HttpServletRequest request)
    {
        String accept = request.getHeader("Accept");
        return accept != null && accept.toLowerCase(Locale.ROOT).contains("text/html");
    }

    private static String escape(String text)
    {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
