package io.sandgate.ingress.embedded;

import java.util.EnumMap;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/** Why {@link BrowserConnection} gave a browser's connection to Jetty's, as the hand-over counter's {@code reason} says it. */
enum Handover
{
    /** The ingress handler declined the request: another face's, health, a WebSocket upgrade on another path. */
    NOT_INGRESS("not-ingress"),
    /** Neither GET nor HEAD. */
    METHOD("method"),
    /** A request with a length or chunks. */
    BODY("body"),
    /** An Upgrade (WebSocket, h2c). */
    UPGRADE("upgrade"),
    EXPECT("expect"),
    /** Not HTTP/1.1. */
    VERSION("version"),
    /** What the parser refused or reported, an absolute or odd target, a missing or repeated Host. */
    MALFORMED("malformed"),
    /** A head that did not fit the read buffer. */
    LONG_HEAD("long-head"),
    /** The listener is stopping: Jetty's answer says so. */
    SHUTDOWN("shutdown");

    private final String label;

    Handover(String label)
    {
        this.label = label;
    }

    /** Counts hand-overs by reason: how much of the browsers' traffic the fast connection leaves to Jetty. */
    static final class Counts
    {
        private final EnumMap<Handover, Counter> counters = new EnumMap<>(Handover.class);

        Counts(MeterRegistry registry)
        {
            for (Handover reason : Handover.values())
                counters.put(reason, Counter.builder("sandgate.ingress.handovers").tag("reason", reason.label)
                    .description("Browser connections the gateway's own HTTP/1 connection gave to Jetty's, by the request that made it")
                    .register(registry));
        }

        void count(Handover reason)
        {
            counters.get(reason).increment();
        }
    }
}
