package io.sandgate.web;

/**
 * Where a front-end outside the servlet API (the embedded runner's ingress handler) reports each
 * exchange it served, so that it is counted and logged as the servlet filter of operations counts
 * and logs the others.
 */
@FunctionalInterface
public interface AccessLog
{
    /** Counts and logs nothing. */
    AccessLog NONE = (remoteAddr, method, path, query, status, startNanos, note) ->
    {
    };

    /**
     * @param remoteAddr the peer's address
     * @param path the request path in the gateway's context
     * @param query the raw query or null; it may carry a grant or a key, so it is logged redacted
     * @param status the status the client got
     * @param startNanos {@link System#nanoTime()} when the request arrived
     * @param note what the face did with the request
     */
    void record(String remoteAddr, String method, String path, String query, int status, long startNanos, AccessNote note);

    /** Whether {@link #record} writes a line, which wants the request's fields in the logging context; counting alone does not. */
    default boolean writesLines()
    {
        return true;
    }

    /**
     * A request path as the log writes it, for a span to say no more than the log line does: by
     * default as it is; the access log redacts anything shaped like a secret.
     *
     * @param path without the query
     */
    default String printable(String path)
    {
        return path;
    }
}
