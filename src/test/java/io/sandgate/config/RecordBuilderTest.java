package io.sandgate.config;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Records built by naming their components: a slip in the code fails loudly, the record's own checks pass through. */
class RecordBuilderTest
{
    record Probe(Duration interval, int failures, Optional<String> url)
    {
        Probe
        {
            if (failures < 1)
                throw new IllegalArgumentException("failures: " + failures + " (expected: >= 1)");
        }
    }

    private static RecordBuilder<Probe> probe()
    {
        return RecordBuilder.of(Probe.class).set("interval", Duration.ofSeconds(3)).set("url", Optional.empty());
    }

    private static String mistake(Runnable build)
    {
        return assertThrows(IllegalStateException.class, build::run).getMessage();
    }

    @Test
    void componentsSetByName_inAnyOrder_buildTheRecord()
    {
        assertEquals(new Probe(Duration.ofSeconds(3), 2, Optional.empty()), probe().set("failures", 2).build());
    }

    @Test
    void recordsOwnCheck_passesThroughAsAConfigProblem()
    {
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class, () -> probe().set("failures", 0).build());
        assertEquals("failures: 0 (expected: >= 1)", x.getMessage());
    }

    @Test
    void codingSlips_failAsIllegalState_withoutShowingTheValue()
    {
        assertEquals("Probe.failures not set", mistake(() -> probe().build()));
        assertEquals("Probe.url set twice", mistake(() -> probe().set("url", Optional.of("x"))));
        assertEquals("Probe.failurs: no such component", mistake(() -> probe().set("failurs", 2)));
        assertEquals("Probe.failures takes int, given a String", mistake(() -> probe().set("failures", "secret")));
        assertEquals("Probe.failures takes int, given null", mistake(() -> probe().set("failures", null)));
    }

    /** Bound from keys: by prefix and kebab-case name, or by @Setting; collections and optionals from unset keys. */
    record Bound(int maxThreads, @Setting("ingress.grant.param") String grant, Optional<Integer> internalPort, List<String> publicOrigins,
                 Set<Integer> ports, Duration given)
    {
    }

    @Test
    void bind_takesEachComponentFromItsKey_orFromTheGivenValues()
    {
        Map<String, Object> values = new HashMap<>();
        values.put("server.max-threads", 64);
        values.put("ingress.grant.param", "g");
        values.put("server.ports", List.of(443, 8443));

        Bound bound = RecordBuilder.bind(Bound.class, "server.", key -> values.get(key.name()), Map.of("given", Duration.ofSeconds(1), "ports", Set.of(1)));

        assertEquals(new Bound(64, "g", Optional.empty(), List.of(), Set.of(1), Duration.ofSeconds(1)), bound);
    }

    record Unbound(int maxThreds)
    {
    }

    @Test
    void bind_aComponentWithoutKey_orAGivenValueWithoutComponent_isACodingSlip()
    {
        assertEquals("Unbound.maxThreds: no key server.max-threds (name it with @Setting, or give its value)",
            mistake(() -> RecordBuilder.bind(Unbound.class, "server.", key -> 1, Map.of())));
        assertEquals("Probe.failurs: no such component",
            mistake(() -> RecordBuilder.bind(Probe.class, "egress.health.", key -> null, Map.of("interval", Duration.ZERO, "failures", 1,
                "url", Optional.empty(), "failurs", 2))));
    }

    @Test
    void bind_aListKeyFillsASetComponent()
    {
        record Ports(Set<Integer> connectPorts)
        {
        }
        assertEquals(new Ports(Set.of(443, 8443)), RecordBuilder.bind(Ports.class, "egress.", key -> List.of(443, 8443, 443), Map.of()));
    }
}
