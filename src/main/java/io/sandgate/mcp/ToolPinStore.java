package io.sandgate.mcp;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * The pinned tool definitions of the MCP servers ({@code mcp.servers[].pin}), shared by the
 * replicas: per server, one record per tool name, as JSON text that the store does not read. Every
 * write is a compare-and-set, so that of two replicas seeing the same change one records and
 * reports it; every write is announced, so that every replica reads the server's records again.
 */
public interface ToolPinStore
{
    /** Every record of the server, by tool name; fails when the store cannot be reached. */
    CompletableFuture<Map<String, String>> all(String server);

    /**
     * Sets a tool's record to {@code value} if it is {@code expected} now (null: the tool has none),
     * and announces the change to every replica.
     *
     * @return whether it was set
     */
    CompletableFuture<Boolean> replace(String server, String tool, String expected, String value);

    /**
     * Sets all the records at once if the server has none yet, and announces it: the first list
     * trusted whole, so that no replica reads part of it and takes the rest for tools added since.
     *
     * @return whether they were set
     */
    CompletableFuture<Boolean> trustFirst(String server, Map<String, String> records);

    /**
     * Called with a server's name, on a thread of the store's where nothing may block, whenever a
     * record of that server was set on any replica.
     */
    void onChange(Consumer<String> listener);

    /** Whether the records outlive the process: false for {@link #inMemory()}. */
    default boolean durable()
    {
        return true;
    }

    /** For one replica: records in this process. */
    static ToolPinStore inMemory()
    {
        return new ToolPinStore()
        {
            @Override
            public boolean durable()
            {
                return false;
            }

            private final Map<String, Map<String, String>> servers = new ConcurrentHashMap<>();
            private final List<Consumer<String>> listeners = new CopyOnWriteArrayList<>();

            @Override
            public CompletableFuture<Map<String, String>> all(String server)
            {
                return CompletableFuture.completedFuture(Map.copyOf(servers.getOrDefault(server, Map.of())));
            }

            @Override
            public CompletableFuture<Boolean> replace(String server, String tool, String expected, String value)
            {
                boolean set;
                synchronized (servers)
                {
                    Map<String, String> records = servers.computeIfAbsent(server, name -> new ConcurrentHashMap<>());
                    set = expected == null ? records.putIfAbsent(tool, value) == null : records.replace(tool, expected, value);
                }
                if (set)
                    listeners.forEach(listener -> listener.accept(server));
                return CompletableFuture.completedFuture(set);
            }

            @Override
            public CompletableFuture<Boolean> trustFirst(String server, Map<String, String> first)
            {
                boolean set;
                synchronized (servers)
                {
                    Map<String, String> records = servers.computeIfAbsent(server, name -> new ConcurrentHashMap<>());
                    set = records.isEmpty();
                    if (set)
                        records.putAll(first);
                }
                if (set)
                    listeners.forEach(listener -> listener.accept(server));
                return CompletableFuture.completedFuture(set);
            }

            @Override
            public void onChange(Consumer<String> listener)
            {
                listeners.add(Objects.requireNonNull(listener));
            }
        };
    }
}
