package io.sandgate.config;

import java.time.Duration;
import java.util.Optional;

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
}
