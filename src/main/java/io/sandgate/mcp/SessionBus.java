package io.sandgate.mcp;

import java.util.Optional;

/**
 * Shared MCP session state: the session records, and per session an ordered, bounded log of the
 * JSON-RPC messages the upstream sent for it. Any replica appends; the replica holding the client's
 * stream subscribes. Every event has an id, so a client reconnecting with {@code Last-Event-ID} to
 * any replica resumes exactly after the last event it saw, in order, without loss or duplicates.
 *
 * <p>In memory for one replica; in Redis (a stream per session plus a pub/sub wake-up on
 * {@code mcp-server-sse:<sessionId>}) for several.</p>
 */
public interface SessionBus extends AutoCloseable
{
    /** Stores a new session; it expires after the session TTL unless touched. */
    void create(McpSession session);

    /**
     * Stores a new session unless its client already holds {@code limit} live ones. Replicas that
     * create sessions for one client at the same instant may together pass the limit by a few: it
     * bounds what one client can hold, it is not a quota to the unit.
     *
     * @param client whom the limit counts for: the client's address, which a client cannot vary at
     *        will as it can its credential
     * @return false, storing nothing, when the client holds {@code limit} sessions already
     */
    boolean create(McpSession session, String client, int limit);

    /** The id of the newest event in the session's log, or null when it has none: a new stream starts after it. */
    String lastEventId(String sessionId);

    /**
     * Whether an id has the form of this bus's event ids. A client's {@code Last-Event-ID} that has
     * not is the upstream's own, from an answer relayed as it came: it is for the upstream to resume.
     */
    boolean isEventId(String id);

    Optional<McpSession> find(String id);

    /** Up to {@code limit} live sessions, for the admin API. */
    java.util.List<McpSession> list(int limit);

    /** Replaces the record (upstream session id learned, and so on) and renews its TTL. */
    void update(McpSession session);

    /**
     * Renews the session's TTL, and that of what counts it against its client's limit. A shared
     * store need not wait for it: every request of the session renews it again, so one renewal lost
     * while the store blinks costs nothing.
     */
    void touch(String id);

    /** Ends the session everywhere: its record and log go, and every subscription is told. */
    void delete(String id);

    /**
     * Appends one JSON-RPC message to the session's log and wakes its subscribers.
     *
     * @param key unique per message: calling again with the same key after an attempt that failed
     *        (its answer lost with the connection, though the write may have landed) appends nothing twice
     * @param traceparent the W3C trace context of the request the message answers, stored and
     *        delivered with it so that the replica delivering it continues that trace; null for none
     * @return the event id
     * @throws io.sandgate.core.StoreUnavailableException if the message could not be stored
     * @throws IllegalStateException if the session no longer exists
     */
    String append(String sessionId, String key, String message, String traceparent);

    /** As {@link #append(String, String, String, String)}, outside any trace. */
    default String append(String sessionId, String key, String message)
    {
        return append(sessionId, key, message, null);
    }

    /**
     * Delivers the session's events after {@code afterEventId} (all retained ones when null), then
     * new ones as they are appended, one at a time and in order.
     */
    Subscription subscribe(String sessionId, String afterEventId, Listener listener);

    @Override
    void close();

    /** Receives a subscription's events, never concurrently. */
    interface Listener
    {
        void onEvent(String eventId, String message);

        /**
         * An event with the trace context it was appended under ({@code traceparent}, null when
         * none); by default the event alone.
         */
        default void onEvent(String eventId, String message, String traceparent)
        {
            onEvent(eventId, message);
        }

        /** The session was deleted or expired. */
        void onEnd();

        /**
         * Whether the listener takes another event now. When it does not, delivery stops without
         * holding a thread, the log keeping what follows, and goes on once {@code whenReady} has
         * run. By default it always does.
         */
        default boolean ready(Runnable whenReady)
        {
            return true;
        }
    }

    /** A live subscription; closing it stops delivery. */
    interface Subscription extends AutoCloseable
    {
        @Override
        void close();
    }
}
