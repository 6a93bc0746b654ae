package io.sandgate.egress;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Which nodes recently failed to open a tunnel to a target without being at fault for sure: they
 * refused it with an answer, or accepted the connection and stayed silent. Either is the node's
 * failure when the target is reachable and the target's when it is not; the attempts of one
 * exchange cannot tell which when the target comes and goes between them (a node refused while the
 * target was down, the retry through another node found it up again). What the node that reached
 * the target saw settles it: if it failed the same target itself within the window, the target is
 * flaky and the refusal is not held against the refusing node. Nodes that refuse a target that
 * another node reaches steadily are still blamed, however many of them there are.
 *
 * <p>Bounded: past {@link #MAX_TARGETS} targets, the stale ones are dropped, and if that is not
 * enough all are. Forgetting only means a refusal may be blamed on less evidence; it never lets a
 * failure through unjudged.</p>
 */
final class TargetFailures
{
    /** How long a node's failure on a target speaks for the target's state. */
    static final long WINDOW_NANOS = TimeUnit.SECONDS.toNanos(10);
    private static final int MAX_TARGETS = 10_000;

    /** target authority -> node id -> when it last failed the target, in {@link System#nanoTime()}. */
    private final Map<String, Map<String, Long>> failures = new ConcurrentHashMap<>();

    /** Node {@code node} failed to open a tunnel to {@code target}, not surely by its own doing. */
    void failed(String target, String node, long now)
    {
        if (failures.size() >= MAX_TARGETS && !failures.containsKey(target))
        {
            failures.values().removeIf(nodes -> isStale(nodes, now));
            if (failures.size() >= MAX_TARGETS)
                failures.clear();
        }
        failures.computeIfAbsent(target, t -> new ConcurrentHashMap<>()).put(node, now);
    }

    /** Whether {@code node} failed {@code target} within the window before {@code now}. */
    boolean failedRecently(String target, String node, long now)
    {
        Map<String, Long> nodes = failures.get(target);
        Long at = nodes == null ? null : nodes.get(node);
        return at != null && now - at <= WINDOW_NANOS;
    }

    private static boolean isStale(Map<String, Long> nodes, long now)
    {
        return nodes.values().stream().allMatch(at -> now - at > WINDOW_NANOS);
    }
}
