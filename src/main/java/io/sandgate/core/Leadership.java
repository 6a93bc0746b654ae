package io.sandgate.core;

/**
 * Who may write shared state that must have one writer, such as routes from the pod watcher.
 * In memory the one process always leads; with Redis a lock with a lease decides, and passes to
 * another replica when the leader dies.
 */
public interface Leadership extends AutoCloseable
{
    /** Calls {@code elected} when this process becomes leader and {@code demoted} when it stops being one. */
    void run(Runnable elected, Runnable demoted);

    boolean isLeader();

    @Override
    void close();

    /** The single-process case: leader at once, for ever. */
    static Leadership always()
    {
        return new Leadership()
        {
            private volatile boolean leading;

            @Override
            public void run(Runnable elected, Runnable demoted)
            {
                leading = true;
                elected.run();
            }

            @Override
            public boolean isLeader()
            {
                return leading;
            }

            @Override
            public void close()
            {
                leading = false;
            }
        };
    }
}
