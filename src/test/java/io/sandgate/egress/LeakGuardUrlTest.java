package io.sandgate.egress;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.sandgate.leak.LeakHit;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** Redaction in a URL, whatever order the scanner's rules report their matches in, and the decoded form the URL is read in too. */
class LeakGuardUrlTest
{
    @Test
    void hitsReportedOutOfOrder_areEachRedacted_andTheRestKept()
    {
        String line = "api.example/v1/AAAA/x?k=BBBB&z=1";
        byte[] bytes = line.getBytes(StandardCharsets.US_ASCII);
        LeakHit second = new LeakHit("b", line.indexOf("BBBB"), line.indexOf("BBBB") + 4);
        LeakHit first = new LeakHit("a", line.indexOf("AAAA"), line.indexOf("AAAA") + 4);

        assertEquals("api.example/v1/%5BREDACTED%5D/x?k=%5BREDACTED%5D&z=1", LeakGuard.redactInUrl(bytes, List.of(second, first)));
        assertEquals("api.example/v1/%5BREDACTED%5D/x?k=%5BREDACTED%5D&z=1", LeakGuard.redactInUrl(bytes, List.of(first, second)));
    }

    @Test
    void overlappingHits_shareOneMarker_andAnEscapeGoesWhole()
    {
        String line = "h/%41BCDEF/y";
        byte[] bytes = line.getBytes(StandardCharsets.US_ASCII);
        // One rule matched from inside the escape, another over the tail.
        List<LeakHit> hits = List.of(new LeakHit("b", 6, 9), new LeakHit("a", 4, 8));

        assertEquals("h/%5BREDACTED%5DF/y", LeakGuard.redactInUrl(bytes, hits));
    }

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
