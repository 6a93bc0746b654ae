package io.sandgate.config;

import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ingress.session-max-age}: the longest the access a grant opens may last. */
class SessionMaxAgeConfigTest
{
    @Test
    void defaultsToTheCookieLifetimeItReplacesForGrantedAccess()
    {
        IngressConfig ingress = ConfigLoader.fromValues(Map.of()).ingress();
        assertEquals(Duration.ofHours(12), ingress.sessionMaxAge());
        assertEquals(ingress.cookie().ttl(), ingress.sessionMaxAge());
    }

    @Test
    void isReadAsADuration_andMustBePositive()
    {
        assertEquals(Duration.ofMinutes(45), ConfigLoader.fromValues(Map.of("ingress.session-max-age", "45m")).ingress().sessionMaxAge());
        ConfigException zero = assertThrows(ConfigException.class, () -> ConfigLoader.fromValues(Map.of("ingress.session-max-age", "0s")));
        assertTrue(zero.getMessage().contains("ingress.session-max-age"), zero.getMessage());
    }
}
