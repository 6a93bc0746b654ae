package io.sandgate.egress;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The agents' policies set at run time ({@code PUT /admin/egress/agents/{id}/policy}), shared by
 * the replicas. Values are the policy as JSON text, so that the store keeps no schema of its own.
 */
public interface AgentPolicyStore
{
    /**
     * Every policy set at run time, by agent id.
     *
     * @throws RuntimeException when the store cannot be reached
     */
    Map<String, String> all();

    /** Sets an agent's policy; every replica's listeners hear of it. */
    void put(String agent, String policy);

    /**
     * Called, on a thread of the store's where nothing may block, whenever a policy was put on any
     * replica; the listener reads {@link #all} elsewhere.
     */
    void onChange(Runnable listener);

    /** For one replica: policies in this process. */
    static AgentPolicyStore inMemory()
    {
        return new AgentPolicyStore()
        {
            private final Map<String, String> policies = new ConcurrentHashMap<>();
            private final List<Runnable> listeners = new CopyOnWriteArrayList<>();

            @Override
            public Map<String, String> all()
            {
                return Map.copyOf(policies);
            }

            @Override
            public void put(String agent, String policy)
            {
                policies.put(agent, policy);
                listeners.forEach(Runnable::run);
            }

            @Override
            public void onChange(Runnable listener)
            {
                listeners.add(listener);
            }
        };
    }
}
