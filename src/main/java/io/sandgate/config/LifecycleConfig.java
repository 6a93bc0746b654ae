package io.sandgate.config;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

import io.sandgate.core.Secret;

/**
 * Sandbox lifecycle at the gateway: paused sandboxes woken by their traffic, the traffic each
 * sandbox carried, and idle ones paused.
 *
 * @param wake how a paused sandbox is woken
 * @param activityFlush how often a replica writes the sandboxes' last activity to the store
 * @param idle when and how an idle sandbox is paused
 */
public record LifecycleConfig(Wake wake, @Setting("ingress.activity.flush") Duration activityFlush, Idle idle)
{
    public LifecycleConfig
    {
        Objects.requireNonNull(wake, "wake");
        Objects.requireNonNull(idle, "idle");
        if (idle.after().isPresent() && idle.url().isEmpty() && !wake.kubernetes())
            throw new IllegalArgumentException(ConfigKeys.IDLE_AFTER.name() + ": " + idle.after().get().toSeconds() + "s (expected: "
                + ConfigKeys.IDLE_URL.name() + " or " + ConfigKeys.WAKE_KUBERNETES.name() + " to pause sandboxes with)");
        if (wake.onMiss() && !wake.enabled())
            throw new IllegalArgumentException(ConfigKeys.WAKE_ON_MISS.name() + ": true (expected: " + ConfigKeys.WAKE_URL.name()
                + " or " + ConfigKeys.WAKE_KUBERNETES.name() + " to wake sandboxes with)");
    }

    /**
     * @param url the manager's resume endpoint
     * @param token bearer token for the manager's endpoints
     * @param kubernetes resume by scaling the sandbox's resource through the pod watcher's client
     * @param timeout how long a request waits for its sandbox to run
     * @param maxWaiting requests waiting for one sandbox, per replica
     * @param maxWaitingTotal requests waiting for any sandbox, per replica
     * @param onMiss wake a sandbox that has no route at all
     */
    public record Wake(Optional<String> url, Optional<Secret> token, boolean kubernetes, Duration timeout, int maxWaiting, int maxWaitingTotal,
                       boolean onMiss)
    {
        /** Whether paused sandboxes are woken at all. */
        public boolean enabled()
        {
            return url.isPresent() || kubernetes;
        }
    }

    /**
     * @param after pause a sandbox idle this long; empty for never
     * @param url the manager's pause endpoint
     * @param countOpenWebsockets never pause a sandbox with an open WebSocket
     */
    public record Idle(Optional<Duration> after, Optional<String> url, boolean countOpenWebsockets)
    {
    }
}
