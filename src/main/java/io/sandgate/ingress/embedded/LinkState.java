package io.sandgate.ingress.embedded;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Where a {@link SandboxLink} is in its life. An exchange's request and answer run at once (the
 * sandbox may answer before the request's last write is reported, on another thread), so the
 * states name the request's progress until the answer is whole. {@link #after} is every legal
 * move, and {@link Machine#move} the one place a link's state changes.
 */
enum LinkState
{
    /** Just opened, or waiting in its destination's pool: it reads only to see the sandbox close it. */
    IDLE,
    /** An exchange is taken on and its request head written; nothing of the browser's body has gone. */
    SENDING_HEAD,
    /** The browser's body streams to the sandbox. */
    SENDING_BODY,
    /** The request is all sent; the answer is awaited, or being relayed. */
    AWAITING_ANSWER,
    /** The answer is whole and the connection can carry another, once the request's last write is reported. */
    ANSWERED,
    /** The connection closed, or closes after an exchange that ended short; no way back. */
    CLOSED;

    /** What moves a link. */
    enum Event
    {
        /** An exchange is taken on. */
        SEND,
        /** The pump has read the first piece of the browser's body, which goes to the sandbox now. */
        BODY_STARTED,
        /** The request's last write is reported. */
        REQUEST_SENT,
        /** The answer is whole and leaves the connection fit for another exchange. */
        ANSWER_WHOLE,
        /** The exchange ends short of that: a failure, the browser gone, or an answer after which the connection cannot be used. */
        ENDED,
        /** The connection closed. */
        CONNECTION_CLOSED
    }

    /** The state after {@code event}, or null where the event has no part (a late report about an exchange already ended, say). */
    LinkState after(Event event)
    {
        return switch (event)
        {
            case SEND -> this == IDLE ? SENDING_HEAD : null;
            case BODY_STARTED -> this == SENDING_HEAD ? SENDING_BODY : null;
            case REQUEST_SENT -> this == SENDING_HEAD || this == SENDING_BODY ? AWAITING_ANSWER : this == ANSWERED ? IDLE : null;
            // A body still on its way leaves the connection unusable (SandboxLink decides): that is ENDED.
            case ANSWER_WHOLE -> this == SENDING_HEAD ? ANSWERED : this == AWAITING_ANSWER ? IDLE : null;
            case ENDED -> awaitsAnswer() ? CLOSED : null;
            case CONNECTION_CLOSED -> this == CLOSED ? null : CLOSED;
        };
    }

    /** An exchange is carried and its answer not yet whole: what a failure, a timeout or the browser leaving ends. */
    boolean awaitsAnswer()
    {
        return this == SENDING_HEAD || this == SENDING_BODY || this == AWAITING_ANSWER;
    }

    /** Whether the link holds an exchange in this state. */
    boolean carries()
    {
        return this != IDLE && this != CLOSED;
    }

    /** A state and the exchange carried in it; null in {@link #IDLE} and {@link #CLOSED}. */
    record Step(LinkState state, SandboxLink.Exchange exchange)
    {
    }

    /**
     * One link's state and the exchange it carries, in one field, changed together: a late report
     * about an exchange that ended (the browser's departure, a cut stream, a write reported) cannot
     * move the next one.
     */
    static final class Machine
    {
        private static final Step RESTING = new Step(IDLE, null);
        private static final Step SHUT = new Step(CLOSED, null);

        private final AtomicReference<Step> step = new AtomicReference<>(RESTING);

        LinkState state()
        {
            return step.get().state();
        }

        /** Whether {@code exchange} is carried and its answer not yet whole. */
        boolean carries(SandboxLink.Exchange exchange)
        {
            Step now = step.get();
            return now.exchange() == exchange && now.state().awaitsAnswer();
        }

        /**
         * Moves by {@link LinkState#after}. Threads race here (the selector reading the answer, the
         * one reporting the request's writes, the browser's, a timer), so it is a compare-and-set,
         * tried again when another move got in first.
         *
         * @param of the exchange the event is about, or null for whichever is carried
         * @return the step moved from, or null if the event has no part where the link is
         */
        Step move(SandboxLink.Exchange of, Event event)
        {
            while (true)
            {
                Step now = step.get();
                if (of != null && now.exchange() != null && now.exchange() != of)
                    return null;
                LinkState next = now.state().after(event);
                if (next == null)
                    return null;
                Step then = next == IDLE ? RESTING : next == CLOSED ? SHUT : new Step(next, of != null ? of : now.exchange());
                if (step.compareAndSet(now, then))
                    return now;
            }
        }
    }
}
