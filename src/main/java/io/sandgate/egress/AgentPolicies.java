package io.sandgate.egress;

import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.config.AgentPolicy;
import io.sandgate.config.CredentialsConfig;
import io.sandgate.core.Audit;
import io.sandgate.core.Schedulers;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The policy in force for each configured agent: the one set at run time through the admin API
 * (kept in the {@link AgentPolicyStore}, so every replica has it), else the one of its
 * configuration. Read on every call from memory; the store's policies are read again whenever any
 * replica announces a change, and every few seconds in case an announcement was missed.
 */
public final class AgentPolicies implements AutoCloseable
{
    private static final Logger LOG = LoggerFactory.getLogger(AgentPolicies.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** The catch-up read: an announcement lost while the store's subscription was down is made good by then. */
    private static final Duration CATCH_UP = Duration.ofSeconds(5);

    /** An agent's policy and where it comes from. */
    public record InForce(AgentPolicy policy, boolean setAtRunTime)
    {
    }

    private final AgentPolicyStore store;
    private final Schedulers schedulers;
    private final ScheduledFuture<?> catchUp;
    private final AtomicBoolean readQueued = new AtomicBoolean();
    private volatile Map<String, AgentPolicy> configured;
    private volatile Map<String, AgentPolicy> setAtRunTime = Map.of();

    public AgentPolicies(CredentialsConfig config, AgentPolicyStore store, Schedulers schedulers)
    {
        this.store = store;
        this.schedulers = schedulers;
        this.configured = configured(config);
        store.onChange(this::readSoon);
        read();
        this.catchUp = schedulers.every(CATCH_UP, CATCH_UP, "Agent policies catch-up", this::readSoon);
    }

    /** Takes a reloaded list of agents: their configured policies, and which agents exist. */
    public void reload(CredentialsConfig config)
    {
        this.configured = configured(config);
    }

    /** The agent's policy, or empty when no configured agent has that id. */
    public Optional<InForce> of(String agent)
    {
        AgentPolicy base = configured.get(agent);
        if (base == null)
            return Optional.empty();
        AgentPolicy set = setAtRunTime.get(agent);
        return Optional.of(set == null ? new InForce(base, false) : new InForce(set, true));
    }

    /** The policy that binds an agent's calls: none for a caller the gateway cannot name. */
    AgentPolicy bindingOf(Optional<String> agent)
    {
        return agent.flatMap(this::of).map(InForce::policy).orElse(AgentPolicy.NONE);
    }

    /**
     * Sets an agent's policy on every replica: in the store, then here at once.
     *
     * @throws IllegalArgumentException when no configured agent has that id
     * @throws RuntimeException when the store cannot be reached; nothing changed
     */
    public void set(String agent, AgentPolicy policy)
    {
        if (!configured.containsKey(agent))
            throw new IllegalArgumentException("no agent " + agent);
        String json;
        try
        {
            json = JSON.writeValueAsString(policy.describe());
        }
        catch (JsonProcessingException x)
        {
            throw new IllegalStateException(x);
        }
        store.put(agent, json);
        Audit.agentPolicySet(agent, json);
        Map<String, AgentPolicy> updated = new HashMap<>(setAtRunTime);
        updated.put(agent, policy);
        setAtRunTime = Map.copyOf(updated);
    }

    /** The store is read on a worker: announcements arrive on its own threads, where nothing may wait for it. */
    private void readSoon()
    {
        if (readQueued.compareAndSet(false, true))
        {
            schedulers.workers().execute(() ->
            {
                readQueued.set(false);
                read();
            });
        }
    }

    private void read()
    {
        try
        {
            Map<String, AgentPolicy> read = new LinkedHashMap<>();
            store.all().forEach((agent, json) ->
            {
                try
                {
                    read.put(agent, AgentPolicy.parse(JSON.readValue(json, Map.class), "stored policy of agent " + agent));
                }
                catch (JsonProcessingException | IllegalArgumentException x)
                {
                    // Written by another version, or by hand: the agent keeps its configured policy.
                    LOG.warn("Stored policy of agent {} ignored: {}", agent, x.getMessage());
                }
            });
            setAtRunTime = Map.copyOf(read);
        }
        catch (RuntimeException x)
        {
            // Kept as last read; the next announcement or catch-up tries again.
            LOG.warn("Agent policies could not be read from the store: {}", x.toString());
        }
    }

    private static Map<String, AgentPolicy> configured(CredentialsConfig config)
    {
        Map<String, AgentPolicy> policies = new HashMap<>();
        config.agents().forEach(agent -> policies.put(agent.id(), agent.policy()));
        return Map.copyOf(policies);
    }

    @Override
    public void close()
    {
        catchUp.cancel(false);
    }
}
