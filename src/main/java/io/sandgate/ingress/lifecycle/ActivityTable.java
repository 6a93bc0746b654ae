package io.sandgate.ingress.lifecycle;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The traffic of every sandbox as each replica last published it: when the replica last carried
 * some for it, and how many of its WebSockets the replica holds open. Each replica writes only its
 * own entries, all of one flush at once ({@link ReplicaActivity}); a replica that dies stops
 * refreshing them and they expire, its open WebSockets first (they died with it), its activity once
 * no idle pause could still need it.
 */
public interface ActivityTable
{
    /**
     * Writes one replica's flush in one round trip.
     *
     * @return completed when written; failed when the store could not be written
     */
    CompletableFuture<Void> publish(Flush flush);

    /** What the replicas published about one sandbox; empty when none published anything. */
    CompletableFuture<SandboxActivity> sandbox(String sandboxId);

    /** What the replicas published about every sandbox, merged: for the idle pass, which looks at all at once. */
    CompletableFuture<Map<String, Summary>> all();

    /**
     * One replica's changes since its last flush.
     *
     * @param replica the replica's name, unique among those sharing the store
     * @param lastActivity the sandboxes that carried traffic since, with the time they last did (epoch millis)
     * @param forgotten sandboxes the replica no longer keeps: quiet longer than {@code retention}, no WebSocket open
     * @param openWebSockets every sandbox with WebSockets open on the replica now, and how many
     * @param closedWebSockets sandboxes whose last WebSocket on the replica closed since
     * @param retention how long the replica's activity entries outlive its last flush
     * @param webSocketTtl how long its WebSocket counts outlive its last flush: a few flushes, as they die with it
     */
    record Flush(String replica, Map<String, Long> lastActivity, Set<String> forgotten, Map<String, Integer> openWebSockets,
                 Set<String> closedWebSockets, Duration retention, Duration webSocketTtl)
    {
        public Flush
        {
            Objects.requireNonNull(replica, "replica");
            lastActivity = Map.copyOf(lastActivity);
            forgotten = Set.copyOf(forgotten);
            openWebSockets = Map.copyOf(openWebSockets);
            closedWebSockets = Set.copyOf(closedWebSockets);
        }

        /** Whether there is nothing to write but the expiry of the WebSocket counts. */
        boolean quiet()
        {
            return lastActivity.isEmpty() && forgotten.isEmpty() && openWebSockets.isEmpty() && closedWebSockets.isEmpty();
        }
    }

    /**
     * One sandbox as the replicas see it.
     *
     * @param lastActivity the latest traffic any replica carried for it, empty when none is recorded
     * @param replicas each replica that published about it, by name, in name order
     */
    record SandboxActivity(Optional<Instant> lastActivity, Map<String, Replica> replicas)
    {
        public SandboxActivity
        {
            Objects.requireNonNull(lastActivity, "lastActivity");
            replicas = new TreeMap<>(replicas);
        }

        /** Whether no replica published anything about the sandbox. */
        public boolean isEmpty()
        {
            return replicas.isEmpty();
        }

        /** Open WebSockets on all replicas together. */
        public int webSockets()
        {
            return replicas.values().stream().mapToInt(Replica::webSockets).sum();
        }

        /** @param lastActivity when the replica last carried traffic for the sandbox, empty when it keeps no record */
        public record Replica(Optional<Instant> lastActivity, int webSockets)
        {
        }
    }

    /**
     * A sandbox over all replicas, as the idle pass needs it.
     *
     * @param lastActivity the latest traffic any replica carried for it (epoch millis), 0 for none recorded
     * @param webSockets open on all replicas together
     */
    record Summary(long lastActivity, int webSockets)
    {
        /** Both together: the later activity, the WebSockets of both. */
        public Summary merge(Summary other)
        {
            return new Summary(Math.max(lastActivity, other.lastActivity), webSockets + other.webSockets);
        }
    }

    /**
     * The table of one replica, in this process: the in-memory store's. Nothing expires, as the
     * only replica that writes it is the one that reads it.
     */
    static ActivityTable inMemory()
    {
        Map<String, Map<String, Long>> activity = new ConcurrentHashMap<>();
        Map<String, Map<String, Integer>> webSockets = new ConcurrentHashMap<>();
        return new ActivityTable()
        {
            @Override
            public synchronized CompletableFuture<Void> publish(Flush flush)
            {
                Map<String, Long> last = activity.computeIfAbsent(flush.replica(), r -> new ConcurrentHashMap<>());
                last.putAll(flush.lastActivity());
                last.keySet().removeAll(flush.forgotten());
                Map<String, Integer> open = webSockets.computeIfAbsent(flush.replica(), r -> new ConcurrentHashMap<>());
                open.keySet().removeAll(flush.closedWebSockets());
                open.putAll(flush.openWebSockets());
                return CompletableFuture.completedFuture(null);
            }

            @Override
            public synchronized CompletableFuture<SandboxActivity> sandbox(String sandboxId)
            {
                Map<String, SandboxActivity.Replica> replicas = new HashMap<>();
                long latest = 0;
                for (String replica : activity.keySet())
                {
                    Long last = activity.get(replica).get(sandboxId);
                    int open = webSockets.getOrDefault(replica, Map.of()).getOrDefault(sandboxId, 0);
                    if (last == null && open == 0)
                        continue;
                    replicas.put(replica, new SandboxActivity.Replica(Optional.ofNullable(last).map(Instant::ofEpochMilli), open));
                    latest = Math.max(latest, last == null ? 0 : last);
                }
                Optional<Instant> lastActivity = latest == 0 ? Optional.empty() : Optional.of(Instant.ofEpochMilli(latest));
                return CompletableFuture.completedFuture(new SandboxActivity(lastActivity, replicas));
            }

            @Override
            public synchronized CompletableFuture<Map<String, Summary>> all()
            {
                Map<String, Summary> merged = new HashMap<>();
                activity.values().forEach(last -> last.forEach((id, millis) -> merged.merge(id, new Summary(millis, 0), Summary::merge)));
                webSockets.values().forEach(open -> open.forEach((id, count) -> merged.merge(id, new Summary(0, count), Summary::merge)));
                return CompletableFuture.completedFuture(merged);
            }
        };
    }
}
