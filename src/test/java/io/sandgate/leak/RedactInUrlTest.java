package io.sandgate.leak;

import java.nio.charset.StandardCharsets;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Redaction in a URL, whatever order the scanner's rules report their matches in. */
class RedactInUrlTest
{
    @Test
    void hitsReportedOutOfOrder_areEachRedacted_andTheRestKept()
    {
        String line = "api.example/v1/AAAA/x?k=BBBB&z=1";
        byte[] bytes = line.getBytes(StandardCharsets.US_ASCII);
        LeakHit second = new LeakHit("b", line.indexOf("BBBB"), line.indexOf("BBBB") + 4);
        LeakHit first = new LeakHit("a", line.indexOf("AAAA"), line.indexOf("AAAA") + 4);

        assertEquals("api.example/v1/%5BREDACTED%5D/x?k=%5BREDACTED%5D&z=1", Redactor.redactInUrl(bytes, List.of(second, first)));
        assertEquals("api.example/v1/%5BREDACTED%5D/x?k=%5BREDACTED%5D&z=1", Redactor.redactInUrl(bytes, List.of(first, second)));
    }

    @Test
    void overlappingHits_shareOneMarker_andAnEscapeGoesWhole()
    {
        String line = "h/%41BCDEF/y";
        byte[] bytes = line.getBytes(StandardCharsets.US_ASCII);
        // One rule matched from inside the escape, another over the tail.
        List<LeakHit> hits = List.of(new LeakHit("b", 6, 9), new LeakHit("a", 4, 8));

        assertEquals("h/%5BREDACTED%5DF/y", Redactor.redactInUrl(bytes, hits));
    }
}
