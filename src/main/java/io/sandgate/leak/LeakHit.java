package io.sandgate.leak;

/**
 * A secret found in a body: which rule matched and where. Offsets count bytes from the start of
 * the scanned body or stream, {@code end} exclusive; the matched bytes themselves are never kept,
 * so a hit is safe to log.
 */
public record LeakHit(String ruleId, long start, long end)
{
    public LeakHit
    {
        if (ruleId == null || ruleId.isBlank())
            throw new IllegalArgumentException("ruleId: " + ruleId + " (expected: a rule's id)");
        if (start < 0 || end <= start)
            throw new IllegalArgumentException("range: [" + start + ", " + end + ") (expected: 0 <= start < end)");
    }

    public long length()
    {
        return end - start;
    }
}
