package io.sandgate.egress;

import java.util.Optional;
import java.util.Set;

/**
 * Chooses the egress node for one attempt of an exchange, in the manner of Armeria's
 * {@code EndpointSelectionStrategy}: {@link #weighted()} by health, region and weight,
 * {@link #sticky} keeping an agent session on its node on top of another selector.
 */
interface NodeSelector
{
    /**
     * A choice of node.
     *
     * @param node the node for the attempt
     * @param repinned whether a sticky session had to leave the node it was pinned to
     */
    record Choice(NodeState node, boolean repinned)
    {
    }

    /**
     * @param pool the route's pool
     * @param sticky the session to keep on one node, if any
     * @param tried the ids of the nodes the exchange already tried, none of which is chosen again
     * @return the node for the attempt, or null when the pool has none left outside {@code tried}
     */
    Choice select(PoolState pool, Optional<EgressPlan.Sticky> sticky, Set<String> tried);

    /** Weighted among the healthy nodes of the preferred region, as {@link PoolState#pick} chooses; sessions play no part. */
    static NodeSelector weighted()
    {
        return (pool, sticky, tried) ->
        {
            NodeState node = pool.pick(tried, System.nanoTime());
            return node == null ? null : new Choice(node, false);
        };
    }

    /**
     * The session's pinned node while it is healthy; otherwise {@code unpinned}'s choice, which
     * becomes the session's pin. A retry away from a healthy pinned node leaves the pin where it is.
     *
     * @param pins where pins are kept (one replica's memory, or a TTL map shared by all)
     */
    static NodeSelector sticky(StickySessions pins, NodeSelector unpinned)
    {
        return new StickyNodeSelector(pins, unpinned);
    }
}
