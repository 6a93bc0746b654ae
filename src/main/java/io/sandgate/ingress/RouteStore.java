package io.sandgate.ingress;

import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The sandbox route table: sandbox id -> {@link Route}. Reads are on the request path, so an
 * implementation answers cached routes from memory and sees writes made by anyone else (a pod
 * watcher, {@code redis-cli}) within about a second.
 */
public interface RouteStore
{
    /**
     * @param id a sandbox id that already passed the id pattern
     * @return the route, or empty if the sandbox has none
     * @throws StoreUnavailableException if the id is not cached and the backing store cannot be asked
     */
    Optional<Route> find(String id);

    /**
     * As {@link #find}, without holding the calling thread while the backing store answers: a
     * cached route completes at once, a miss when the store has answered (on the store client's
     * thread). For front-ends that run on Jetty's selector threads, which must never wait. The
     * default suits a store whose {@code find} never waits; a store that may be asked overrides it.
     *
     * @return the route or empty; failed with {@link StoreUnavailableException} as {@code find} throws it
     */
    default CompletableFuture<Optional<Route>> findAsync(String id)
    {
        try
        {
            return CompletableFuture.completedFuture(find(id));
        }
        catch (RuntimeException x)
        {
            return CompletableFuture.failedFuture(x);
        }
    }

    /**
     * The route when this replica has it at hand, asking no one: what {@link #find} would answer
     * at once. Empty when the sandbox has no route or the store would have to be asked; the default
     * suits a store that keeps nothing locally.
     */
    default Optional<Route> cached(String id)
    {
        return Optional.empty();
    }

    /**
     * Calls {@code listener} whenever this replica learns that routes may have changed: after a write
     * of its own, when another's write is heard of (a Redis keyspace notification), and after the
     * cache was re-read (a poll). On the store's thread, so a listener only asks for what it waits for
     * ({@link #lookUp}) and never waits itself. Heard for every id at once: the store does not always
     * know which ids changed.
     */
    void onChanges(Runnable listener);

    /**
     * As {@link #findAsync}, but asking the backing store even when the route is cached: for the few
     * ids a caller waits to see change, right when a change is heard, before the cache is re-read.
     */
    default CompletableFuture<Optional<Route>> lookUp(String id)
    {
        return findAsync(id);
    }

    /** Writes a route, replacing any other for this id. */
    void put(String id, Route route);

    /** Removes a route; returns whether there was one. */
    boolean remove(String id);

    /**
     * Removes the route only if it still carries this generation (a pod uid): a late event about
     * an old pod must never delete the route a newer pod of the same sandbox wrote.
     */
    boolean removeIf(String id, String generation);

    /**
     * Stamps the sandbox's route so that grants and session cookies issued up to {@code before} are
     * refused ({@link Route#revokedBefore()}), keeping its target and generation. Atomic against
     * other writers: a route written meanwhile is stamped, never overwritten with an older one.
     *
     * @return the route as stamped, or empty when the sandbox has no route
     * @throws StoreUnavailableException if the backing store cannot be asked
     */
    Optional<Route> revoke(String id, Instant before);

    /** A snapshot of every route, for the admin API; a search is the way through a large table. */
    Map<String, Route> all();

    /**
     * A page of the routes whose sandbox id starts with {@code prefix}, for an operator looking for
     * one among many: the store is walked a part at a time, never read whole. Following
     * {@link RoutePage#next()} until it is empty yields every route that was there throughout the
     * search, in no particular order across pages; one written or removed meanwhile may or may not be
     * seen, and a Redis hash resized meanwhile may show a route twice.
     *
     * @param prefix the start of the ids sought; empty for all
     * @param cursor null for the first page, else the {@code next} of the page before
     * @param limit most routes on a page (a page may hold fewer and still have a next one)
     * @throws IllegalArgumentException if the cursor is not one this store gave
     * @throws StoreUnavailableException if the backing store cannot be asked
     */
    RoutePage search(String prefix, String cursor, int limit);
}
