package io.sandgate.web;

import java.io.IOException;
import java.util.function.Predicate;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * Gives every response of a servlet context {@link NoScript}'s headers before anything writes it:
 * health and readiness, metrics, the other faces' answers, the container's error pages, whichever
 * servlet or filter writes them. Requests forwarded to a sandbox are left alone, since the page is
 * the sandbox's (its own policy, and in path mode the gateway's confinement); what the gateway
 * answers on those itself carries the headers through {@link Errors} and the ingress's redirects.
 * A servlet whose page needs a script of its own (the admin dashboard) sets a policy of its own,
 * which replaces this one.
 */
public final class NoScriptFilter extends HttpFilter
{
    private final Predicate<HttpServletRequest> toSandbox;

    /** @param toSandbox whether a request is the ingress's, to be forwarded to a sandbox */
    public NoScriptFilter(Predicate<HttpServletRequest> toSandbox)
    {
        this.toSandbox = toSandbox;
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain) throws IOException, ServletException
    {
        if (!toSandbox.test(request))
            NoScript.set(response);
        chain.doFilter(request, response);
    }
}
