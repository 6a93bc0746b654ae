package io.sandgate.config;

import java.time.Duration;

/**
 * The embedded runner's listener; ignored inside a servlet container.
 *
 * @param host address to bind
 * @param port port, 0 for any free one
 * @param maxThreads request thread pool size
 * @param stopTimeout graceful stop budget
 */
public record ServerConfig(String host, int port, int maxThreads, Duration stopTimeout)
{
}
