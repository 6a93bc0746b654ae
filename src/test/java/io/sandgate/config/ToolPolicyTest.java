package io.sandgate.config;

import java.time.Duration;
import java.util.List;

import io.sandgate.config.McpConfig.ToolPolicy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The globs of {@code mcp.servers[].tools}: {@code *} any run of characters, {@code ?} one, anything else itself. */
class ToolPolicyTest
{
    @ParameterizedTest
    @CsvSource({
        "*, '', true", "*, read_file, true", "**, x, true", "'*', '*', true",
        "read_*, read_, true", "read_*, read, false", "*_file, read_file, true", "*_file, read_files, false",
        "a*b, ab, true", "a*b, axxb, true", "a*b, axxbx, false", "a*b*c, abbc, true", "a*b*c, acb, false",
        "*aab, aaab, true", "*ab*ab, abxabyab, true", "*ab*ab, abxa, false",
        "*_*_delete, a_b_delete, true", "*_*_delete, __delete, true", "*_*_delete, a_delete, false", "*_*_delete, a_b_delete_x, false",
        "?, '', false", "?, a, true", "??, a, false", "a?c, abc, true", "a?c, ac, false", "*?, '', false", "*?, a, true",
        "a*, 'a*', true", "a, '*', false", "x*, '*x', false", "search, searching, false", "search, Search, false"})
    void glob_matchesAsDocumented(String glob, String tool, boolean matches)
    {
        assertEquals(matches, new ToolPolicy(List.of(glob), List.of()).allows(tool), glob + " against " + tool);
        assertEquals(!matches, new ToolPolicy(List.of(), List.of(glob)).allows(tool), "the same as a deny glob");
    }

    /**
     * A tool name is the agent's to choose, and every call is matched against the policy: against
     * a glob with two stars, a long name made only of what the glob's literals start with took time
     * quadratic in the name (9 s at 40 000 characters), a replica's CPU for one request. The bound
     * here is on complexity, not speed: a million characters against each glob in a few seconds at
     * most means at most the name's length times the glob's.
     */
    @Test
    void longToolName_isMatchedInTimeLinearInItsLength()
    {
        String separators = "_".repeat(1_000_000);
        String letters = "a".repeat(1_000_000);
        ToolPolicy policy = new ToolPolicy(List.of(), List.of("*_*_delete", "*_*_?x", "*a*ab", "?*a*b?"));
        assertTimeoutPreemptively(Duration.ofSeconds(5), () ->
        {
            assertTrue(policy.allows(separators));
            assertTrue(policy.allows(letters));
            assertFalse(policy.allows(separators + "_delete"));
            assertFalse(policy.allows(letters + "b"));
        });
    }
}
