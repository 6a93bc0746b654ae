package io.sandgate.web;

import java.io.IOException;
import java.util.function.Predicate;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.http.HttpStatus;

/**
 * Keeps the gateway's own pages from serving as a tool against its users, for every response of a
 * servlet context that is not forwarded to a sandbox: health and readiness, metrics, the other
 * faces' answers, the container's error pages, whichever servlet or filter writes them.
 * <ul>
 * <li>{@link NoScript}'s headers are set before anything writes the response. A servlet whose page
 * needs a script of its own (the admin dashboard) sets a policy of its own, which replaces this one.</li>
 * <li>{@code TRACE} is refused: {@code HttpServlet} answers it by echoing the request's headers,
 * the {@code HttpOnly} session cookie and any {@code Authorization} among them, and whatever a
 * proxy in front adds (RFC 9110, section 9.3.8, leaves it to the server to refuse).</li>
 * </ul>
 * Requests forwarded to a sandbox are left alone, since the page is the sandbox's (its own policy,
 * and in path mode the gateway's confinement); what the gateway answers on those itself carries
 * the headers through {@link Errors} and the ingress's redirects.
 */
public final class GatewayPagesFilter extends HttpFilter
{
    private final Predicate<HttpServletRequest> toSandbox;

    /** @param toSandbox whether a request is the ingress's, to be forwarded to a sandbox */
    public GatewayPagesFilter(Predicate<HttpServletRequest> toSandbox)
    {
        this.toSandbox = toSandbox;
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain) throws IOException, ServletException
    {
        if (toSandbox.test(request))
        {
            chain.doFilter(request, response);
            return;
        }
        NoScript.set(response);
        if (HttpMethod.TRACE.is(request.getMethod()))
        {
            Errors.write(request, response, new GatewayException(HttpStatus.METHOD_NOT_ALLOWED_405, "method_not_allowed",
                "TRACE is not served: it would echo the request's cookies and credentials"));
            return;
        }
        chain.doFilter(request, response);
    }
}
