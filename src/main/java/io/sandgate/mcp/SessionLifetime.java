package io.sandgate.mcp;

import java.util.Objects;

/**
 * A session as the lifetime of the upstream stream of a 2024-11-05 server held for it: it ends
 * when the session is deleted or expires on any replica, and ending it (the server closed its
 * stream) ends the session. A session opened again under the same id (a federation's member
 * session) is another incarnation, with another message URL: the end of the old one leaves it be.
 */
final class SessionLifetime extends Lifetime
{
    private final SessionBus bus;
    private final String sessionId;
    private volatile String messageUrl;

    SessionLifetime(SessionBus bus, String sessionId)
    {
        this.bus = bus;
        this.sessionId = sessionId;
    }

    /** Starts noticing the session's end, once it is ready (the server announced {@code messageUrl}). */
    void watch(String messageUrl)
    {
        this.messageUrl = messageUrl;
        SessionBus.Subscription watch = bus.subscribe(sessionId, bus.lastEventId(sessionId), new SessionBus.Listener()
        {
            @Override
            public void onEvent(String eventId, String message)
            {
            }

            @Override
            public void onEnd()
            {
                close();
            }
        });
        onClose(watch::close);
    }

    @Override
    void close()
    {
        if (!ended())
            return;
        String url = messageUrl;
        if (url == null || bus.find(sessionId).map(session -> Objects.equals(session.upstreamMessageUrl().orElse(null), url)).orElse(false))
            bus.delete(sessionId);
    }
}
