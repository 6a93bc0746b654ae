package io.sandgate.store;

import java.util.Map;

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

    RedisAgentPolicyStore(RedissonClient redisson)
    {
        this.policies = redisson.getMap(NAME, StringCodec.INSTANCE);
        this.changes = redisson.getTopic(NAME, StringCodec.INSTANCE);
    }

    @Override
    public Map<String, String> all()
    {
        return policies.readAllMap();
    }

    @Override
    public void put(String agent, String policy)
    {
        policies.fastPut(agent, policy);
        changes.publish(agent);
    }

    @Override
    public void onChange(Runnable listener)
    {
        changes.addListener(String.class, (channel, agent) -> listener.run());
    }
}
