package io.sandgate.ingress.embedded;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The default cap leaves a process's own files and one upstream connection per client connection their descriptors. */
class ServerConnectionLimitTest
{
    @Test
    void theDefaultCap_isHalfOfWhatTheDescriptorsLeaveAfterTheProcesssOwn()
    {
        // The attacked gateway's limit: 21 000 idle connections took all of it.
        assertEquals(9_000, ServerConnectionLimit.forDescriptors(20_000));
        // A shell's usual soft limit: a tenth would be too few for the process's own files.
        assertEquals((1024 - 256) / 2, ServerConnectionLimit.forDescriptors(1024));
        assertEquals(471_859, ServerConnectionLimit.forDescriptors(1 << 20));
        assertEquals(16, ServerConnectionLimit.forDescriptors(100), "never none");
    }

    @Test
    void thisProcesssCap_isBelowItsDescriptorLimit()
    {
        long descriptors = ServerConnectionLimit.descriptorLimit();
        assertTrue(descriptors > 0, "the JVM reports the limit on this platform");
        assertTrue(2L * ServerConnectionLimit.forThisProcess() < descriptors);
    }

    @Test
    void aCapOfNone_isRefused()
    {
        assertThrows(IllegalArgumentException.class, () -> new ServerConnectionLimit(0, new SimpleMeterRegistry()));
    }
}
