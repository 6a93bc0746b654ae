package io.sandgate.mcp;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * What an upstream stream the gateway holds lives as long as: a client's stream, or a session.
 * Whoever ends it first, the actions registered run once.
 */
abstract class Lifetime
{
    private final List<Runnable> onClose = new CopyOnWriteArrayList<>();
    private volatile boolean open = true;

    boolean isOpen()
    {
        return open;
    }

    /** Runs the action when it ends, whoever ends it; at once if it has. */
    void onClose(Runnable action)
    {
        onClose.add(action);
        if (!open && onClose.remove(action))
            action.run();
    }

    abstract void close();

    /**
     * Marks it ended and runs the actions; false, doing nothing, if it had ended already. Marked
     * under the monitor, which a subclass's own state shares; the actions run outside it, since
     * some wait (a store's delete): a thread writing to the stream meanwhile must not wait with them.
     */
    protected final boolean ended()
    {
        synchronized (this)
        {
            if (!open)
                return false;
            open = false;
        }
        for (Runnable action : onClose)
        {
            if (onClose.remove(action))
                action.run();
        }
        return true;
    }
}
