package io.sandgate.store;

import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import io.sandgate.egress.AgentPolicyStore;
import org.redisson.api.RMap;
import org.redisson.api.RTopic;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/**
 * Agents' policies in a Redis hash ({@code sandgate:egress:agent-policies}, agent id -> JSON), with
 * a put announced on a topic of the same name, so that every replica re-reads within a moment. A
 * replica that missed an announcement (its subscription was down) catches up at its next periodic
 * read.
 */
final class RedisAgentPolicyStore implements AgentPolicyStore
{
    private static final String NAME = "sandgate:egress:agent-policies";

    private final RMap<String, String> policies;
    private final RTopic changes;
    /** The listener to subscribe, until a subscription is made: Redis may be down when the gateway starts. */
    private final AtomicReference<Runnable> unsubscribed = new AtomicReference<>();

    RedisAgentPolicyStore(RedissonClient redisson)
    {
        this.policies = redisson.getMap(NAME, StringCodec.INSTANCE);
        this.changes = redisson.getTopic(NAME, StringCodec.INSTANCE);
    }

    @Override
    public Map<String, String> all()
    {
        subscribe();
        return policies.readAllMap();
    }

    @Override
    public void put(String agent, String policy)
    {
        policies.fastPut(agent, policy);
        changes.publish(agent);
    }

    /**
     * Subscribes without waiting, so that a gateway starts while Redis is down; a subscription that
     * could not be made is tried again by the next read (the periodic catch-up), which Redisson then
     * keeps across reconnects.
     */
    @Override
    public void onChange(Runnable listener)
    {
        unsubscribed.set(listener);
        subscribe();
    }

    private void subscribe()
    {
        Runnable listener = unsubscribed.getAndSet(null);
        if (listener == null)
            return;
        try
        {
            changes.addListenerAsync(String.class, (channel, agent) -> listener.run()).whenComplete((id, failure) ->
            {
                if (failure != null)
                    unsubscribed.compareAndSet(null, listener);
            });
        }
        catch (RuntimeException x)
        {
            // Redisson may refuse at once when it has no connection: the next read tries again.
            unsubscribed.compareAndSet(null, listener);
        }
    }
}
