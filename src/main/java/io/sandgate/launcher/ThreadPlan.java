package io.sandgate.launcher;

import io.sandgate.config.ConfigException;
import io.sandgate.config.ConfigKeys;

/**
 * How the embedded runner shares {@code server.max-threads} out. The listeners' selectors and
 * acceptors, the clients' selectors and the reserved threads all come from that pool (Jetty leases
 * them as the server starts), and what they hold is not there to run requests.
 *
 * <p>Selectors used to be one per core on every listener. On a node of 64 cores with the internal
 * and forward-proxy listeners that leased more threads than the default pool has, and the runner did
 * not start; on fewer cores it could start with a handful of threads left for every servlet request.
 * So the selectors are bounded by the pool, and once everything has leased its threads, at least
 * half of the pool must remain: half of it may wait for Redis at once (see {@code RedisWaits}), and
 * the rest must still serve everything else.</p>
 *
 * @param publicSelectors the public listener's: they also run the core front-end's exchanges, so one
 *        per core (Jetty's default, one on 2 cores, left a core idle), up to an eighth of the pool
 * @param listenerSelectors the internal and forward-proxy listeners': their requests run on the pool
 *        and the selectors only read and write, so one per core up to a thirty-second of it
 * @param reservedThreads the threads Jetty keeps ready to take over a selector whose task may block:
 *        one per core up to a sixteenth of the pool (Jetty's own bound is an eighth, which with every
 *        listener on a large machine left a pool of 40 less than half)
 */
record ThreadPlan(int publicSelectors, int listenerSelectors, int reservedThreads)
{
    static ThreadPlan of(int cores, int maxThreads)
    {
        return new ThreadPlan(share(cores, maxThreads / 8), share(cores, maxThreads / 32), share(cores, maxThreads / 16));
    }

    /** One per core, up to {@code bound}, and at least one. */
    private static int share(int cores, int bound)
    {
        return Math.max(1, Math.min(cores, bound));
    }

    /**
     * Fails a start whose leased threads leave less than half of the pool to run requests.
     *
     * @param leased the threads the started server's selectors, acceptors, clients and reserved threads hold
     * @throws ConfigException naming {@code server.max-threads} and the least value that would do
     */
    static void checkLeft(int maxThreads, int leased, int cores)
    {
        if (2 * leased > maxThreads)
            throw tooFew(maxThreads, "the listeners' and clients' selectors and acceptors and the reserved threads take " + leased
                + " of them on " + cores + " cores, and at least half must remain to run requests; set it to at least " + 2 * leased);
    }

    /** The pool could not even lease all of them: {@code required} threads were asked for by the time it ran out. */
    static ConfigException tooFewToStart(int maxThreads, int required, int cores)
    {
        return tooFew(maxThreads, "the listeners' and clients' selectors and acceptors and the reserved threads ask for more ("
            + required + " or more on " + cores + " cores), and at least half must remain to run requests; set it to more than " + 2 * required);
    }

    private static ConfigException tooFew(int maxThreads, String why)
    {
        return new ConfigException(ConfigKeys.SERVER_MAX_THREADS.name() + " = " + maxThreads + " is too few: " + why);
    }
}
