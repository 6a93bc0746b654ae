package io.sandgate.net;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertThrows;

/** Only strict literals: anything InetAddress would resolve or reinterpret is refused. */
class CidrStrictnessTest
{
    @ParameterizedTest
    @ValueSource(strings = {"cafe.be", "dead.beef/16", "192.168/16", "10.1/16", "10.0.0.0/+8", "256.1.1.1", "1.2.3", "10.0.0.0/x"})
    void refused(String text)
    {
        assertThrows(IllegalArgumentException.class, () -> Cidr.parse(text));
    }
}
