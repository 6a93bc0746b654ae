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
        Optional<String> current = pins.get(key, sticky.get().ttl());
        NodeState pinned = current.map(pool::node).orElse(null);
        if (pinned != null && !pinned.isEjected())
        {
            if (!tried.contains(pinned.node().id()))
                return new Choice(pinned, false);
            // A retry goes to another node, but the pin stays with its node while that node is in
            // service: one failed exchange does not move a session.
            return unpinned.select(pool, sticky, tried);
        }
        // No pin yet, or its node is ejected (or gone): the chosen node becomes the pin, and a pin
        // that moved is announced.
        Choice choice = unpinned.select(pool, sticky, tried);
        if (choice == null)
            return null;
        String chosen = choice.node().node().id();
        pins.put(key, chosen, sticky.get().ttl());
        return new Choice(choice.node(), current.isPresent() && !current.get().equals(chosen));
    }
}
