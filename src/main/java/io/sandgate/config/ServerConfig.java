package io.sandgate.config;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

import io.sandgate.net.Origins;

/**
 * The embedded runner's listeners and what the process serves; in a servlet container only
 * {@code role}, {@code faces} and {@code publicOrigins} apply.
 *
 * @param host address to bind
 * @param port port, 0 for any free one; with an internal port it serves ingress and health only
 * @param internalPort where MCP, egress, admin and metrics are served, if apart from {@code port}
 * @param maxThreads request thread pool size
 * @param stopTimeout graceful stop budget
 * @param idleTimeout how long a client's connection may stay idle while the gateway waits on the client
 * @param role what this process serves
 * @param faces which faces are switched on
 * @param publicOrigins origins users reach the gateway under, as {@code scheme://host[:port]}
 * @param maxConcurrentRequestsPerClient requests one client may have in progress at once
 * @param maxConnectionsPerClient connections one client address may hold open at once, on the listeners together
 * @param maxConnections connections the listeners hold open at once, all clients together; empty to derive it from the descriptor limit
 * @param headTimeout how long a request head may take to arrive, from its first byte
 * @param clientIpv6Prefix how many leading bits of an IPv6 client's address the per-client limits count it by
 * @param internalClientIpv6Prefix the same, for a client of the internal listener when there is one
 * @param ingressFrontEnd which API the embedded runner serves ingress HTTP on
 */
public record ServerConfig(String host, int port, Optional<Integer> internalPort, int maxThreads, Duration stopTimeout, Duration idleTimeout,
                           Role role, Faces faces, List<String> publicOrigins, int maxConcurrentRequestsPerClient,
                           int maxConnectionsPerClient, Optional<Integer> maxConnections, Duration headTimeout, int clientIpv6Prefix,
                           int internalClientIpv6Prefix, IngressFrontEnd ingressFrontEnd)
{
    public ServerConfig
    {
        Objects.requireNonNull(idleTimeout, "idleTimeout");
        Objects.requireNonNull(headTimeout, "headTimeout");
        Objects.requireNonNull(internalPort, "internalPort");
        Objects.requireNonNull(maxConnections, "maxConnections");
        Objects.requireNonNull(faces, "faces");
        Objects.requireNonNull(ingressFrontEnd, "ingressFrontEnd");
        if (internalPort.isPresent() && internalPort.get() != 0 && internalPort.get() == port)
            throw new IllegalArgumentException("server.internal-port: " + internalPort.get() + " (expected: a port other than server.port)");
        List<String> origins = new ArrayList<>();
        for (String origin : publicOrigins)
            origins.add(Origins.canonical(origin, "server.public-origins"));
        publicOrigins = List.copyOf(origins);
    }

    /**
     * As a servlet container serves it: every face on the container's connectors, none apart as
     * the embedded runner's internal listener, whose clients are counted by a prefix of their own.
     */
    public ServerConfig withoutInternalPort()
    {
        return new ServerConfig(host, port, Optional.empty(), maxThreads, stopTimeout, idleTimeout, role, faces, publicOrigins,
            maxConcurrentRequestsPerClient, maxConnectionsPerClient, maxConnections, headTimeout, clientIpv6Prefix, internalClientIpv6Prefix, ingressFrontEnd);
    }

    /** What a process serves. */
    public enum Role
    {
        /** The three faces (and the pod watcher when enabled). */
        GATEWAY,
        /** Only the pod watcher, health, metrics and the admin API: no traffic. */
        CONTROLPLANE
    }

    /**
     * What serves ingress HTTP in the embedded runner. A servlet container (the WAR) always uses the
     * servlets; WebSocket upgrades go through them in both cases.
     */
    public enum IngressFrontEnd
    {
        /** A handler on Jetty's core API, in front of the servlets: no request wrapping, no copies. */
        CORE,
        /** The session filter and proxy servlet, exactly as the WAR serves them. */
        SERVLET
    }

    /** The faces switched on ({@code ingress.enabled}, {@code mcp.enabled}, {@code egress.enabled}). */
    public record Faces(@Setting("ingress.enabled") boolean ingress, @Setting("mcp.enabled") boolean mcp, @Setting("egress.enabled") boolean egress)
    {
        public static final Faces ALL = new Faces(true, true, true);
    }
}
