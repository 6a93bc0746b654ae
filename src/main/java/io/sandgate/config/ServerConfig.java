package io.sandgate.config;

import java.time.Duration;

/**
 * The embedded runner's listener; ignored inside a servlet container.
 *
 * @param host address to bind
 * @param port port, 0 for any free one
 * @param maxThreads request thread pool size
 * @param stopTimeout graceful stop budget
 * @param role what this process serves
 */
public record ServerConfig(String host, int port, int maxThreads, Duration stopTimeout, Role role)
{
    /** What a process serves. */
    public enum Role
    {
        /** The three faces (and the pod watcher when enabled). */
        GATEWAY,
        /** Only the pod watcher, health, metrics and the admin API: no traffic. */
        CONTROLPLANE
    }
}
