package io.sandgate.ingress.websocket;

import java.util.EnumSet;

import io.sandgate.ingress.websocket.Pump.Event;
import io.sandgate.ingress.websocket.Pump.State;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The transitions of a pump's state, one direction of a tunnel: what the gateway may still write to a sink. */
class PumpStateTest
{
    @Test
    void onceTheSourceIsDropped_itIsNeverPassedAgain()
    {
        for (State state : EnumSet.of(State.STOPPED, State.STOPPED_CLOSE_WANTED, State.SINK_GONE))
        {
            for (Event event : Event.values())
            {
                State next = state.on(event);
                assertTrue(next.dropping() || next == State.ENDING, state + " on " + event + " gave " + next);
            }
        }
    }

    @Test
    void anEndedPump_staysEnded()
    {
        for (Event event : Event.values())
            assertEquals(State.ENDING, State.ENDING.on(event), event.toString());
    }

    @Test
    void aClose_goesBeforeAPing_andNoPingFollowsIt()
    {
        assertEquals(State.CLOSE_WANTED, State.PING_WANTED.on(Event.CLOSE));
        assertEquals(State.CLOSE_WANTED, State.CLOSE_WANTED.on(Event.PING));
        assertEquals(State.STOPPED, State.CLOSE_WANTED.on(Event.OWN_FRAME_TAKEN), "the close taken, the source is dropped");
        assertEquals(State.STOPPED, State.STOPPED.on(Event.PING));
        assertEquals(State.PASSING, State.PING_WANTED.on(Event.OWN_FRAME_TAKEN));
    }

    @Test
    void aStoppedSource_stillLetsTheGatewaysCloseFollow()
    {
        assertEquals(State.STOPPED, State.PING_WANTED.on(Event.STOP), "a waiting ping is dropped");
        assertEquals(State.STOPPED_CLOSE_WANTED, State.STOPPED.on(Event.CLOSE));
        assertEquals(State.STOPPED_CLOSE_WANTED, State.CLOSE_WANTED.on(Event.STOP), "a waiting close still goes");
    }

    @Test
    void aGoneSink_isWrittenNothingMore()
    {
        for (State state : State.values())
        {
            if (state != State.ENDING)
                assertEquals(State.SINK_GONE, state.on(Event.SINK_GONE), state.toString());
        }
        assertEquals(State.SINK_GONE, State.SINK_GONE.on(Event.CLOSE));
        assertEquals(State.SINK_GONE, State.SINK_GONE.on(Event.PING));
        assertEquals(State.SINK_GONE, State.SINK_GONE.on(Event.OWN_FRAME_TAKEN));
    }
}
