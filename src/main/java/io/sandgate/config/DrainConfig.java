package io.sandgate.config;

import java.time.Duration;

/**
 * How a replica leaves (SIGTERM, {@code POST /admin/drain}): not ready at once, serving for a grace
 * period, WebSockets closed spread out, exit when nothing is left or at the timeout.
 *
 * @param grace listeners keep serving this long after readiness turned 503
 * @param spread bridged WebSockets are closed evenly over this time
 * @param timeout the process exits at the latest this long after the drain began
 */
public record DrainConfig(Duration grace, Duration spread, Duration timeout)
{
}
