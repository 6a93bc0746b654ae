package io.sandgate.mcp;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.McpConfig;
import io.sandgate.config.McpConfig.PinMode;
import io.sandgate.core.Audit;
import io.sandgate.core.Schedulers;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The pinned tool definitions of the servers that pin them ({@code mcp.servers[].pin}), as every
 * replica judges lists and calls by them: read from the {@link ToolPinStore} into memory, read again
 * whenever a replica announces a change (so an approval is in force everywhere within a moment), and
 * every few seconds in case an announcement was missed. Lists and calls never wait for the store.
 * <p>
 * Trust on first use: the first {@code tools/list} answer seen for a server with no records is
 * approved whole. After that, a tool whose definition differs from the approved one, or a name
 * never approved (a rename is a new tool), is a pending change: recorded, reported once (audit
 * line {@code mcp.tool.changed}, counter {@code sandgate.mcp.tool.pin.changes}) by the replica whose
 * write won, and under {@code enforce} hidden from lists and refused on calls until approved. While
 * the records cannot be read, an enforcing server's tools are hidden and refused.
 */
public final class ToolPins implements AutoCloseable
{
    /** How long a read that overlapped a write of this replica's waits before it is made again. */
    private static final long REREAD_AFTER_MILLIS = 200;
    /** The longest tool name MCP allows (2025-11-25: 1 to 128 characters). */
    static final int MAX_NAME_CHARS = 128;
    private static final Logger LOG = LoggerFactory.getLogger(ToolPins.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration CATCH_UP = Duration.ofSeconds(5);
    private static final long ADMIN_WAIT_SECONDS = 5;
    /** Compare-and-set rounds an approval tries while lists keep changing the record under it. */
    private static final int ADMIN_ATTEMPTS = 3;
    /**
     * Bounds on what one server gets kept in the store: the server chooses its names and texts,
     * and must not fill Redis. A name past the first {@value #MAX_TOOLS} is not recorded and never
     * served under {@code enforce}; a definition longer than {@value #MAX_RECORD_CHARS} characters
     * is kept as its digest alone ({@link ToolDefinition#oversized}). A record holds at most two
     * definitions (approved, served): a server gets at most about 32 MiB kept, whatever it lists.
     */
    static final int MAX_TOOLS = 1024;
    static final int MAX_RECORD_CHARS = 16 * 1024;
    private static final long WARN_EVERY_MILLIS = 60_000;

    /**
     * A pending change as an operator decides on it.
     *
     * @param before null for an added tool
     * @param since when the served definition was first seen (ISO-8601)
     */
    public record Change(String server, String tool, String kind, Definition before, Definition after, String since)
    {
    }

    /** A definition as the admin API shows it. */
    public record Definition(String digest, JsonNode description, JsonNode inputSchema, JsonNode outputSchema, JsonNode definition)
    {
        static Definition of(ToolDefinition definition)
        {
            return definition == null ? null : new Definition(definition.digest(), definition.part("description"), definition.part("inputSchema"),
                definition.part("outputSchema"), definition.canonical());
        }
    }

    /** A record as read, with its text: the text is what a compare-and-set expects. */
    private record Stored(String text, ToolPin pin)
    {
    }

    private final McpConfig config;
    private final ToolPinStore store;
    private final Schedulers schedulers;
    private final MeterRegistry registry;
    private final Clock clock;
    /** By server; a server is absent until its records were read once. */
    private final Map<String, Map<String, Stored>> pins = new ConcurrentHashMap<>();
    /**
     * By server, changed only inside {@code pins.compute} for that server: the newest read applied,
     * how many records this replica put into its memory, and how many of those the store has
     * answered for. Memory runs ahead of the store while writes are under way: a read that began
     * before a newer one, or that a write of this replica overlapped, would take back what is known
     * since, and is dropped.
     */
    private final Map<String, Long> readApplied = new ConcurrentHashMap<>();
    private final Map<String, Long> written = new ConcurrentHashMap<>();
    private final Map<String, Long> answered = new ConcurrentHashMap<>();
    private final AtomicLong reads = new AtomicLong();
    private final AtomicLong lastWarning = new AtomicLong(Long.MIN_VALUE / 2);
    private final Set<String> readsQueued = ConcurrentHashMap.newKeySet();
    private final ScheduledFuture<?> catchUp;

    public ToolPins(McpConfig config, ToolPinStore store, Schedulers schedulers, MeterRegistry registry, Clock clock)
    {
        this.config = config;
        this.store = store;
        this.schedulers = schedulers;
        this.registry = registry;
        this.clock = clock;
        // No subscription, nor reads, on a deployment where no server pins.
        if (!pinned().isEmpty())
            store.onChange(this::readSoon);
        // Trust on first use starts over with every restart: the operator must know it.
        if (!pinned().isEmpty() && !store.durable())
            LOG.warn("MCP tool pins of {} are kept in this process only: a restart loses them and the first list seen after it is trusted again; "
                + "set store.type: redis to keep them", pinned().stream().map(McpConfig.Server::name).toList());
        pinned().forEach(server -> readSoon(server.name()));
        this.catchUp = pinned().isEmpty() ? null : schedulers.every(CATCH_UP, CATCH_UP, "MCP tool pins catch-up",
            () -> pinned().forEach(server -> readSoon(server.name())));
    }

    /** The configured server of that name if it pins its tools. */
    public Optional<McpConfig.Server> pinning(String server)
    {
        return Optional.ofNullable(config.server(server)).filter(found -> found.pin() != PinMode.OFF);
    }

    /**
     * Records what a {@code tools/list} answer of the server lists, and says which of its names
     * clients may not see. Answers at once from memory; writes go to the store in the background.
     *
     * @param tools the answer's {@code tools} array, whole
     * @return the names to hide: none unless the server enforces
     */
    Set<String> observe(McpConfig.Server server, JsonNode tools)
    {
        if (server.pin() == PinMode.OFF)
            return Set.of();
        Map<String, ToolDefinition> listed = definitions(tools);
        Map<String, Stored> known = pins.get(server.name());
        if (known == null)
        {
            readSoon(server.name());
            return enforcing(server) ? listed.keySet() : Set.of();
        }
        Instant now = clock.instant();
        Set<String> hidden = new HashSet<>();
        boolean firstList = known.isEmpty();
        int[] records = {known.size()};
        Map<String, ToolPin> changed = new LinkedHashMap<>();
        listed.forEach((tool, listedDefinition) ->
        {
            Stored stored = known.get(tool);
            // A name longer than MCP allows is never a record's key (a megabyte name on every replica
            // and in the store, times the record limit): hidden where enforced, and that is all.
            if (stored == null && tool.length() > MAX_NAME_CHARS)
            {
                if (enforcing(server))
                    hidden.add(tool);
                return;
            }
            if (stored == null && records[0]++ >= MAX_TOOLS)
            {
                hidden.add(tool);
                tooMuch(server.name());
                return;
            }
            ToolDefinition definition = ToolDefinition.text(listedDefinition.canonical()).length() > MAX_RECORD_CHARS
                ? ToolDefinition.oversized(tool, listedDefinition) : listedDefinition;
            ToolPin next;
            if (firstList)
                next = definition.ambiguous() ? new ToolPin(null, definition, now, List.of()) : ToolPin.trusted(definition);
            else
                next = stored == null ? new ToolPin(null, definition, now, List.of()) : stored.pin().serving(definition, now);
            if (next.hides(definition))
                hidden.add(tool);
            if (stored == null || !sameServed(stored.pin(), next))
                changed.put(tool, next);
        });
        // Into memory at once, so that this replica judges the next delivery of the very list by
        // them; then to the store, in the background.
        cache(server.name(), changed);
        if (firstList)
            trustFirst(server.name(), changed);
        else
            changed.forEach((tool, next) -> write(server.name(), tool, known.get(tool), next));
        return enforcing(server) ? hidden : Set.of();
    }

    /**
     * Checks an upstream message as it comes in: the {@code tools} arrays of its results are
     * {@linkplain #observe observed}. Costs nothing for a server that does not pin, or a message
     * that holds no such array.
     */
    void record(McpConfig.Server server, String message)
    {
        if (server.pin() == PinMode.OFF || !message.contains("\"tools\"") && !message.contains("\\u"))
            return;
        try
        {
            JsonNode root = JSON.readTree(message);
            for (JsonNode node : root.isArray() ? root : List.of(root))
            {
                if (node.path("result").path("tools").isArray())
                    observe(server, node.path("result").path("tools"));
            }
        }
        catch (JsonProcessingException x)
        {
            // Not JSON: no list in it.
        }
    }

    /**
     * The names of a {@code tools} array that clients may not see, judged by the pins as they are,
     * recording nothing: for a list that may be an old one.
     */
    Set<String> judge(McpConfig.Server server, JsonNode tools)
    {
        if (!enforcing(server))
            return Set.of();
        Map<String, ToolDefinition> listed = definitions(tools);
        Map<String, Stored> known = pins.get(server.name());
        if (known == null)
        {
            readSoon(server.name());
            return listed.keySet();
        }
        // Nothing pinned yet: the server's first list is trusted as it comes in.
        if (known.isEmpty())
            return Set.of();
        Set<String> hidden = new HashSet<>();
        listed.forEach((tool, definition) ->
        {
            Stored stored = known.get(tool);
            if (stored == null || stored.pin().hides(definition))
                hidden.add(tool);
        });
        return hidden;
    }

    /** Whether a call of the tool may go: always unless the server enforces. */
    boolean callable(McpConfig.Server server, String tool)
    {
        if (!enforcing(server))
            return true;
        Map<String, Stored> known = pins.get(server.name());
        if (known == null)
        {
            readSoon(server.name());
            return false;
        }
        // Nothing pinned yet: the server's first list will be trusted, and so are calls before it.
        if (known.isEmpty())
            return true;
        Stored stored = known.get(tool);
        return stored != null && stored.pin().callable();
    }

    /**
     * The server's pending changes, as the store holds them now.
     *
     * @throws RuntimeException when the store cannot be reached
     */
    public List<Change> pending(String server)
    {
        List<Change> changes = new ArrayList<>();
        readNow(server).forEach((tool, stored) ->
        {
            if (stored.pin().pending())
                changes.add(change(server, tool, stored.pin()));
        });
        changes.sort((a, b) -> a.tool().compareTo(b.tool()));
        return changes;
    }

    /**
     * Approves what the server serves as the tool; in force on every replica within a moment.
     *
     * @param digest the digest the operator saw, if given: a newer definition is not approved in its place
     * @return the change approved, or empty when the tool has none pending or rejected
     * @throws IllegalArgumentException when {@code digest} is not the served one, or the tool is listed ambiguously
     */
    public Optional<Change> approve(String server, String tool, Optional<String> digest)
    {
        return decide(server, tool, digest, true);
    }

    /**
     * Rejects what the server serves as the tool: no longer reported; under {@code enforce} the tool
     * stays hidden while the server serves it.
     */
    public Optional<Change> reject(String server, String tool, Optional<String> digest)
    {
        return decide(server, tool, digest, false);
    }

    private Optional<Change> decide(String server, String tool, Optional<String> digest, boolean approve)
    {
        for (int attempt = 0; attempt < ADMIN_ATTEMPTS; attempt++)
        {
            Stored stored = readNow(server).get(tool);
            if (stored == null || stored.pin().served() == null)
                return Optional.empty();
            ToolPin pin = stored.pin();
            ToolDefinition served = pin.served();
            if (digest.isPresent() && !digest.get().equals(served.digest()))
                throw new IllegalArgumentException("tool " + tool + " of MCP server " + server + " is served with digest " + served.digest() + " now, not " + digest.get());
            if (approve && served.ambiguous())
                throw new IllegalArgumentException("MCP server " + server + " lists tool " + tool + " more than once with different definitions: it cannot be approved");
            ToolPin next = approve ? pin.approve() : pin.reject();
            if (await(store.replace(server, tool, stored.text(), next.toJson())))
            {
                cache(server, tool, next);
                String old = pin.approved() == null ? null : pin.approved().digest();
                if (approve)
                    Audit.toolApproved(server, tool, old, served.digest());
                else
                    Audit.toolRejected(server, tool, old, served.digest());
                return Optional.of(change(server, tool, pin));
            }
        }
        throw new IllegalArgumentException("tool " + tool + " of MCP server " + server + " keeps changing; list it again and retry");
    }

    private static Change change(String server, String tool, ToolPin pin)
    {
        return new Change(server, tool, pin.kind(), Definition.of(pin.approved()), Definition.of(pin.served()),
            pin.since() == null ? null : pin.since().toString());
    }

    private static boolean enforcing(McpConfig.Server server)
    {
        return server.pin() == PinMode.ENFORCE;
    }

    private static boolean sameServed(ToolPin current, ToolPin next)
    {
        ToolDefinition before = current.served();
        ToolDefinition after = next.served();
        return before == null ? after == null : after != null && before.digest().equals(after.digest());
    }

    /**
     * Each listed name's definition: a name listed twice with one definition is that one; with
     * different ones, both at once, which is never served (a client would pick one of them at random).
     */
    private static Map<String, ToolDefinition> definitions(JsonNode tools)
    {
        Map<String, Map<String, ToolDefinition>> byName = new LinkedHashMap<>();
        for (JsonNode tool : tools)
        {
            JsonNode name = tool.path("name");
            if (name.isTextual())
            {
                ToolDefinition definition = ToolDefinition.of(tool);
                byName.computeIfAbsent(name.asText(), key -> new LinkedHashMap<>()).putIfAbsent(definition.digest(), definition);
            }
        }
        Map<String, ToolDefinition> definitions = new LinkedHashMap<>();
        byName.forEach((name, distinct) -> definitions.put(name, distinct.size() == 1
            ? distinct.values().iterator().next() : ToolDefinition.ambiguous(List.copyOf(distinct.values()))));
        return definitions;
    }

    /** Writes a server's first list in the background, whole, unless another replica wrote one first. */
    private void trustFirst(String server, Map<String, ToolPin> first)
    {
        Map<String, String> records = new LinkedHashMap<>();
        first.forEach((tool, pin) -> records.put(tool, pin.toJson()));
        store.trustFirst(server, records).whenComplete((set, failure) ->
        {
            answered(server, first.size());
            if (failure != null || !set)
            {
                readSoon(server);
                return;
            }
            first.forEach((tool, pin) -> reported(server, tool, null, pin));
        });
    }

    /** Writes a record in the background; the replica whose write wins reports a new pending change. */
    private void write(String server, String tool, Stored stored, ToolPin next)
    {
        store.replace(server, tool, stored == null ? null : stored.text(), next.toJson()).whenComplete((set, failure) ->
        {
            answered(server, 1);
            if (failure != null || !set)
            {
                // Another replica wrote first, or the store is away: read what is there.
                readSoon(server);
                return;
            }
            reported(server, tool, stored, next);
        });
    }

    /** A record written: a new pending change is reported, once, by the replica that wrote it. */
    private void reported(String server, String tool, Stored stored, ToolPin next)
    {
        if (!next.pending() || stored != null && sameServed(stored.pin(), next))
            return;
        String old = next.approved() == null ? null : next.approved().digest();
        Audit.toolChanged(server, tool, next.kind(), old, next.served().digest());
        Counter.builder("sandgate.mcp.tool.pin.changes").description("Changed or added MCP tool definitions, each counted once as it is first seen")
            .tag("server", server).tag("kind", next.kind()).register(registry).increment();
    }

    /** Writes the store has answered for, whether it took them or not. */
    private void answered(String server, int writes)
    {
        pins.computeIfPresent(server, (name, known) ->
        {
            answered.merge(server, (long)writes, Long::sum);
            return known;
        });
    }

    private void tooMuch(String server)
    {
        long now = clock.millis();
        long last = lastWarning.get();
        if (now - last >= WARN_EVERY_MILLIS && lastWarning.compareAndSet(last, now))
            LOG.warn("MCP server {} lists more than {} tools: the others are not recorded, and never served under pin: enforce", server, MAX_TOOLS);
    }

    /** A record the store already holds, into memory. */
    private void cache(String server, String tool, ToolPin pin)
    {
        answered(server, 1);
        cache(server, Map.of(tool, pin));
    }

    /** Records into memory, each counted as a write the store is to answer for. */
    private void cache(String server, Map<String, ToolPin> records)
    {
        if (records.isEmpty())
            return;
        pins.computeIfPresent(server, (name, known) ->
        {
            written.merge(server, (long)records.size(), Long::sum);
            Map<String, Stored> updated = new HashMap<>(known);
            records.forEach((tool, pin) -> updated.put(tool, new Stored(pin.toJson(), pin)));
            return Map.copyOf(updated);
        });
    }

    /** Reads a server's records on a worker: announcements arrive on the store's threads, where nothing may wait. */
    private void readSoon(String server)
    {
        if (pinning(server).isEmpty() || !readsQueued.add(server))
            return;
        schedulers.workers().execute(() ->
        {
            readsQueued.remove(server);
            long read = reads.incrementAndGet();
            long writes = written.getOrDefault(server, 0L);
            store.all(server).whenComplete((records, failure) ->
            {
                if (failure != null)
                    LOG.warn("Pinned tools of MCP server {} could not be read from the store: {}", server, failure.toString());
                else if (!apply(server, read, writes, parsed(server, records)))
                    // A write of this replica's is still under way: read again once it has had time to land, not at once in a loop.
                    schedulers.timer().schedule(() -> readSoon(server), REREAD_AFTER_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS);
            });
        });
    }

    private Map<String, Stored> readNow(String server)
    {
        long read = reads.incrementAndGet();
        long writes = written.getOrDefault(server, 0L);
        Map<String, Stored> records = parsed(server, await(store.all(server)));
        apply(server, read, writes, records);
        return records;
    }

    /** Takes a read into memory unless it is older than what is there; false when a write of this replica came after it. */
    private boolean apply(String server, long read, long writes, Map<String, Stored> records)
    {
        boolean[] current = {true};
        pins.compute(server, (name, known) ->
        {
            long now = written.getOrDefault(server, 0L);
            boolean overlapped = now != writes || answered.getOrDefault(server, 0L) != now;
            if (known != null && (overlapped || readApplied.getOrDefault(server, 0L) > read))
            {
                current[0] = !overlapped;
                return known;
            }
            readApplied.put(server, read);
            return records;
        });
        return current[0];
    }

    private static Map<String, Stored> parsed(String server, Map<String, String> read)
    {
        Map<String, Stored> parsed = new HashMap<>();
        read.forEach((tool, text) ->
        {
            try
            {
                parsed.put(tool, new Stored(text, ToolPin.parse(text)));
            }
            catch (IllegalArgumentException x)
            {
                // Written by another version, or by hand: the tool counts as never approved.
                LOG.warn("Pinned definition of tool {} of MCP server {} ignored: {}", tool, server, x.getMessage());
            }
        });
        return Map.copyOf(parsed);
    }

    private List<McpConfig.Server> pinned()
    {
        return config.servers().stream().filter(server -> server.pin() != PinMode.OFF).toList();
    }

    private static <T> T await(CompletableFuture<T> future)
    {
        try
        {
            return future.get(ADMIN_WAIT_SECONDS, TimeUnit.SECONDS);
        }
        catch (ExecutionException x)
        {
            throw x.getCause() instanceof RuntimeException cause ? cause : new IllegalStateException(x.getCause());
        }
        catch (TimeoutException x)
        {
            throw new IllegalStateException("the store did not answer in " + ADMIN_WAIT_SECONDS + " s", x);
        }
        catch (InterruptedException x)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", x);
        }
    }

    @Override
    public void close()
    {
        if (catchUp != null)
            catchUp.cancel(false);
    }
}
