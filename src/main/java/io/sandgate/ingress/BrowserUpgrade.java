package io.sandgate.ingress;

import java.io.IOException;

import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * How a browser's connection becomes a tunnel's browser leg once the sandbox has answered 101: the
 * browser gets its own 101 with the sandbox's answer, then its connection carries bytes only.
 */
@FunctionalInterface
public interface BrowserUpgrade
{
    /** The standard servlet upgrade, which every servlet container offers: the WAR's. */
    BrowserUpgrade STANDARD = ServletLeg::upgrade;

    /**
     * Answers the browser 101 with {@link Tunnel#answer} and hands its connection to the tunnel,
     * which starts once the connection is its own.
     */
    void upgrade(HttpServletRequest request, HttpServletResponse response, Tunnel tunnel) throws IOException, ServletException;
}
