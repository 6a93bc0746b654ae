package io.sandgate.store;

import java.time.Clock;
import java.util.function.Function;
import java.util.function.Supplier;

import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.SandgateConfig;
import io.sandgate.core.Leadership;
import io.sandgate.core.Schedulers;
import io.sandgate.core.StoreHealth;
import io.sandgate.egress.AgentBudgets;
import io.sandgate.egress.AgentPolicyStore;
import io.sandgate.egress.InspectionCa;
import io.sandgate.egress.MemoryStickySessions;
import io.sandgate.egress.StickySessions;
import io.sandgate.ingress.Redemptions;
import io.sandgate.ingress.RouteStore;
import io.sandgate.ingress.lifecycle.ActivityTable;
import io.sandgate.ingress.lifecycle.PauseClaims;
import io.sandgate.ingress.lifecycle.WakeClaims;
import io.sandgate.mcp.CallQuotas;
import io.sandgate.mcp.MemorySessionBus;
import io.sandgate.mcp.SessionBus;
import io.sandgate.mcp.ToolPinStore;

/**
 * Shared state of all replicas: in memory for one replica, in Redis for many. The only place that
 * decides which; nothing outside this package knows Redisson. Both kinds are the same parts
 * behind the same accessors, so a store is those parts, built by {@link #create} for one replica
 * or by {@link RedisStore#connect} for many.
 */
public final class Store implements AutoCloseable
{
    private final RouteStore routes;
    private final Redemptions redemptions;
    private final WakeClaims wakeClaims;
    private final ActivityTable activity;
    private final PauseClaims pauseClaims;
    private final StickySessions sticky;
    private final SessionBus sessions;
    private final CallQuotas quotas;
    private final ToolPinStore toolPins;
    private final Agents agents;
    private final Function<String, Leadership> leadership;
    private final Supplier<StoreHealth> health;
    /** Releases what the parts hold: the session bus, and for Redis its threads and connections. */
    private final Runnable close;
    /** Where a generated egress inspection CA is shared; set once, as the store is made. */
    private InspectionCa.SharedCa inspectionCa = InspectionCa.SharedCa.inProcess();

    Store(RouteStore routes, Redemptions redemptions, WakeClaims wakeClaims, Lifecycle lifecycle, StickySessions sticky, SessionBus sessions,
        CallQuotas quotas, ToolPinStore toolPins, Agents agents, Function<String, Leadership> leadership, Supplier<StoreHealth> health, Runnable close)
    {
        this.toolPins = toolPins;
        this.agents = agents;
        this.routes = routes;
        this.redemptions = redemptions;
        this.wakeClaims = wakeClaims;
        this.activity = lifecycle.activity();
        this.pauseClaims = lifecycle.pauseClaims();
        this.sticky = sticky;
        this.sessions = sessions;
        this.quotas = quotas;
        this.leadership = leadership;
        this.health = health;
        this.close = close;
    }

    /** Shares a generated egress inspection CA through this store's own key (Redis) rather than within the process. */
    Store sharingInspectionCa(InspectionCa.SharedCa shared)
    {
        this.inspectionCa = shared;
        return this;
    }

    /** Where the egress face keeps a CA it generated, so that every replica signs with the same one. */
    public InspectionCa.SharedCa inspectionCa()
    {
        return inspectionCa;
    }

    /** On the system's clock. */
    public static Store create(SandgateConfig config, MeterRegistry registry, Schedulers schedulers)
    {
        return create(config, registry, schedulers, Clock.systemUTC());
    }

    /** @param clock the time the route cache and grant redemptions are judged by */
    public static Store create(SandgateConfig config, MeterRegistry registry, Schedulers schedulers, Clock clock)
    {
        return switch (config.store().type())
        {
            case MEMORY -> memory(config, schedulers, clock);
            case REDIS -> RedisStore.connect(config, registry, schedulers, clock);
        };
    }

    /** The embedded default: one replica, state in this process, nothing to run beside it. */
    private static Store memory(SandgateConfig config, Schedulers schedulers, Clock clock)
    {
        MemorySessionBus sessions = new MemorySessionBus(config.mcp().sessionTtl(), config.mcp().replayBuffer(), config.mcp().replayBufferBytes(),
            config.mcp().replayBufferBytesPerClient(), schedulers);
        return new Store(new MemoryRouteStore(config.ingress().staticRoutes()), Redemptions.inMemory(clock), WakeClaims.inMemory(clock),
            new Lifecycle(ActivityTable.inMemory(), PauseClaims.inMemory(clock)), new MemoryStickySessions(), sessions,
            CallQuotas.inMemory(clock), ToolPinStore.inMemory(), new Agents(AgentPolicyStore.inMemory(), AgentBudgets.inMemory(clock)), name -> Leadership.always(),
            () -> new StoreHealth("memory", true, "in-process"), sessions::close);
    }

    public RouteStore routes()
    {
        return routes;
    }

    /** Grants already redeemed, so that each opens a session once across the replicas. */
    public Redemptions redemptions()
    {
        return redemptions;
    }

    /** Which replica asks a paused sandbox's manager to resume it. */
    public WakeClaims wakeClaims()
    {
        return wakeClaims;
    }

    /** Every replica's traffic per sandbox, for the idle pause and the admin view. */
    public ActivityTable activity()
    {
        return activity;
    }

    /** Which idle spells of which sandboxes were asked to pause already. */
    public PauseClaims pauseClaims()
    {
        return pauseClaims;
    }

    /** Leader election among the replicas sharing this store. */
    public Leadership leadership(String name)
    {
        return leadership.apply(name);
    }

    /** Egress sticky-session pins. */
    public StickySessions sticky()
    {
        return sticky;
    }

    /** MCP sessions and their event logs. */
    public SessionBus sessions()
    {
        return sessions;
    }

    /** MCP tool-call counters ({@code mcp.servers[].quota}). */
    public CallQuotas quotas()
    {
        return quotas;
    }

    /** Pinned MCP tool definitions ({@code mcp.servers[].pin}). */
    public ToolPinStore toolPins()
    {
        return toolPins;
    }

    /** Egress agents' policies set at run time. */
    public AgentPolicyStore agentPolicies()
    {
        return agents.policies();
    }

    /** Egress agents' budget counters ({@code egress.agents[].policy.budgets}). */
    public AgentBudgets agentBudgets()
    {
        return agents.budgets();
    }

    /** Asks the backing store whether it answers; cheap enough for a readiness probe. */
    public StoreHealth health()
    {
        return health.get();
    }

    @Override
    public void close()
    {
        close.run();
    }

    /** The egress agents' shared state: their policies set at run time and their budget counters. */
    record Agents(AgentPolicyStore policies, AgentBudgets budgets)
    {
    }

    /** The idle pause's shared state: the replicas' activity and the pauses claimed. */
    record Lifecycle(ActivityTable activity, PauseClaims pauseClaims)
    {
    }
}
