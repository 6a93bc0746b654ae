package io.sandgate.ingress;

/**
 * Where this replica notes the traffic it carries for each sandbox, for the idle pause and the
 * admin view: requests forwarded, and the data frames of bridged WebSockets either way (never the
 * gateway's own pings and the pongs that answer them). Called on the request path and for every
 * frame a tunnel passes, so a note must cost a field write and nothing more: no allocation, no
 * lock held long, no call to the store (the implementation publishes what it noted on its own time).
 *
 * <p>Only a sandbox a request is actually forwarded to is noted: ids a client made up, or named
 * without the access to reach, never get this far, so they cannot grow what is recorded nor make
 * another sandbox look busy.</p>
 */
public interface ActivityRecorder
{
    /** Notes nothing: for an ingress built without the lifecycle. */
    ActivityRecorder NONE = new ActivityRecorder()
    {
        @Override
        public void forwarded(String sandboxId)
        {
        }

        @Override
        public WebSocket webSocketOpened(String sandboxId)
        {
            return WebSocket.NONE;
        }
    };

    /** A request is being forwarded to the sandbox, its route found running and its access checked. */
    void forwarded(String sandboxId);

    /**
     * A bridged WebSocket to the sandbox has opened: it counts as open until {@link WebSocket#closed},
     * and each {@link WebSocket#carried} notes traffic on it.
     */
    WebSocket webSocketOpened(String sandboxId);

    /** One open WebSocket's notes, made by its tunnel. */
    interface WebSocket
    {
        WebSocket NONE = new WebSocket()
        {
            @Override
            public void carried()
            {
            }

            @Override
            public void closed()
            {
            }
        };

        /** Data passed, either way; called per write, so it reads a clock tick and writes a field at most. */
        void carried();

        /** The WebSocket is closed; later calls change nothing. */
        void closed();
    }
}
