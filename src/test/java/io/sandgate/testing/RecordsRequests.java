package io.sandgate.testing;

import java.util.List;

/** A fixture that records the requests it serves, for tests to read back and clear between steps. */
public interface RecordsRequests<R extends RecordedHeaders>
{
    /** The live record the server appends to; thread-safe, since handlers run on server threads. */
    List<R> requestLog();

    /** The requests served so far, in order, as a snapshot. */
    default List<R> requests()
    {
        return List.copyOf(requestLog());
    }

    default int requestCount()
    {
        return requestLog().size();
    }

    default void clearRequests()
    {
        requestLog().clear();
    }
}
