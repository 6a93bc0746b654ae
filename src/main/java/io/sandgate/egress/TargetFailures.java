package io.sandgate.egress;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Which nodes recently failed to open a tunnel to a target without being at fault for sure: they
 * refused it with an answer, or accepted the connection and stayed silent. Either is the node's
 * failure when the target is reachable and the target's when it is not; the attempts of one
 * exchange cannot tell which when the target comes and goes between them (a node refused while the
 * target was down, the retry through another node found it up again). What other exchanges saw
 * settles it: if a second node failed the same target within the window, the target is flaky and
 * no node is blamed for it.
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

    /** Whether a node other than {@code node} failed {@code target} within the window before {@code now}. */
    boolean failedThroughOthers(String target, String node, long now)
    {
        Map<String, Long> nodes = failures.get(target);
        if (nodes == null)
            return false;
        for (Map.Entry<String, Long> failure : nodes.entrySet())
        {
            if (!failure.getKey().equals(node) && now - failure.getValue() <= WINDOW_NANOS)
                return true;
        }
        return false;
    }

    private static boolean isStale(Map<String, Long> nodes, long now)
    {
        return nodes.values().stream().allMatch(at -> now - at > WINDOW_NANOS);
    }
}
