package io.sandgate.leak;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The decoded form a URL is read in too, for secrets escaped in it. */
class PercentDecodedTest
{
    @Test
    void percentDecoding_isLenient_andMapsEachByteBackToWhereItStands()
    {
        PercentDecoded decoded = PercentDecoded.of("a%41%zz%c3%A9%4".getBytes(StandardCharsets.US_ASCII));
        assertArrayEquals(new byte[] {'a', 'A', '%', 'z', 'z', (byte)0xC3, (byte)0xA9, '%', '4'}, decoded.bytes(), "malformed escapes stay as they are");
        assertEquals(1, decoded.rawOffset(1), "a decoded byte stands where its escape starts");
        assertEquals(4, decoded.rawOffset(2));
        assertEquals(7, decoded.rawOffset(5));
        assertEquals(10, decoded.rawOffset(6));
        assertEquals(15, decoded.rawOffset(9), "the end maps to the end");
        assertNull(PercentDecoded.of("a%zz%4+b%".getBytes(StandardCharsets.US_ASCII)), "nothing to decode");
    }
}
