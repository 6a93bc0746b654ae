package io.sandgate.egress;

import java.util.Optional;
import java.util.Set;

/** See {@link NodeSelector#sticky}. */
final class StickyNodeSelector implements NodeSelector
{
    private final StickySessions pins;
    private final NodeSelector unpinned;

    StickyNodeSelector(StickySessions pins, NodeSelector unpinned)
    {
        this.pins = pins;
        this.unpinned = unpinned;
    }

    @Override
    public Choice select(PoolState pool, Optional<EgressPlan.Sticky> sticky, Set<String> tried)
    {
        if (sticky.isEmpty())
            return unpinned.select(pool, sticky, tried);
        String key = sticky.get().key();
        boolean repinned = false;
        // Only a first attempt goes to the pin: a retry is on another node by definition.
        if (tried.isEmpty())
        {
            Optional<String> current = pins.get(key, sticky.get().ttl());
            if (current.isPresent())
            {
                NodeState node = pool.node(current.get());
                if (node != null && !node.isEjected())
                    return new Choice(node, false);
                repinned = true;
            }
        }
        Choice choice = unpinned.select(pool, sticky, tried);
        if (choice == null)
            return null;
        pins.put(key, choice.node().node().id(), sticky.get().ttl());
        return new Choice(choice.node(), repinned);
    }
}
