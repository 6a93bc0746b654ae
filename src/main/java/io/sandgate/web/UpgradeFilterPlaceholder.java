package io.sandgate.web;

import java.io.IOException;

import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;

/**
 * Declared, mapped nowhere, under the name of Jetty's WebSocket upgrade filter, so that Jetty's
 * WebSocket initializer finds its filter declared already and maps none. Jetty's filter would wrap
 * every request of the context (a core request and response built around the servlet ones) only to
 * look for upgrades to endpoints registered by path. Sandgate registers none: it upgrades through
 * {@code ServerContainer.upgradeHttpToWebSocket}, which needs no filter. The WAR declares it in
 * {@code web.xml}, the embedded runner in its contexts; in other containers the name means nothing,
 * and a filter mapped nowhere never runs.
 */
public final class UpgradeFilterPlaceholder implements Filter
{
    /** The name Jetty looks its upgrade filter up by ({@code WebSocketUpgradeFilter.class.getName()}). */
    public static final String JETTY_UPGRADE_FILTER = "org.eclipse.jetty.ee10.websocket.servlet.WebSocketUpgradeFilter";

    @Override
    public void doFilter(ServletRequest request, ServletResponse response, FilterChain chain) throws IOException, ServletException
    {
        chain.doFilter(request, response);
    }
}
