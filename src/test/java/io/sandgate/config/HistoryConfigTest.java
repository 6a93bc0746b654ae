package io.sandgate.config;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The dashboard history's settings: defaults, and values that stop start-up naming their key. */
class HistoryConfigTest
{
    @Test
    void defaults_keepHalfAnHourAtFiveSeconds()
    {
        HistoryConfig history = ConfigLoader.fromValues(Map.of()).history();
        assertEquals(new HistoryConfig(Duration.ofSeconds(5), 360), history);
    }

    @Test
    void tooFineAnInterval_orTooFewSamples_stopStartUp_namingTheKey()
    {
        ConfigException fine = assertThrows(ConfigException.class, () -> ConfigLoader.fromValues(Map.of("admin.history.interval", "50ms")));
        assertTrue(fine.problems().toString().contains("admin.history.interval"), fine.problems().toString());
        ConfigException few = assertThrows(ConfigException.class, () -> ConfigLoader.fromValues(Map.of("admin.history.samples", "1")));
        assertTrue(few.problems().toString().contains("admin.history.samples"), few.problems().toString());
    }
}
