package io.sandgate.config;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** A structured setting's table: its keys are checked, its values parsed, and every problem says where it is. */
class ConfigTableTest
{
    private static final Set<String> KEYS = Set.of("timeout", "upstream", "domains", "match");

    private static String problem(Runnable read)
    {
        return assertThrows(IllegalArgumentException.class, read::run).getMessage();
    }

    @Test
    void notATable_saysWhatWasExpected()
    {
        assertEquals("egress.pools.p (expected: {region: ..., nodes: [...]})",
            problem(() -> ConfigTable.of("eu-west", "egress.pools.p", "{region: ..., nodes: [...]}", KEYS)));
    }

    @Test
    void unknownKey_isFatal_andTheKnownOnesAreListedInOrder()
    {
        assertEquals("egress.routes[0]: unknown key timout (expected: domains, match, timeout, upstream)",
            problem(() -> ConfigTable.of(Map.of("timout", "5s"), "egress.routes[0]", "a route", KEYS)));
    }

    @Test
    void values_areParsedByTheFlatKeysParsers_orFallBack()
    {
        ConfigTable table = ConfigTable.of(Map.of("timeout", "5s"), "egress.routes[0]", "a route", KEYS);

        assertEquals(Duration.ofSeconds(5), table.get("timeout", ValueParser.duration(), Duration.ZERO));
        assertEquals(Duration.ZERO, table.get("upstream", ValueParser.duration(), Duration.ZERO));
        assertEquals(Optional.empty(), table.optional("upstream", ValueParser.duration()));
    }

    @Test
    void unparsableValue_namesItsPlace_theValue_andWhatWasExpected()
    {
        ConfigTable table = ConfigTable.of(Map.of("timeout", "soon"), "egress.routes[0]", "a route", KEYS);

        assertEquals("egress.routes[0].timeout: soon (expected: a duration such as 500ms, 30s, 5m, 1h or PT1H)",
            problem(() -> table.get("timeout", ValueParser.duration(), null)));
    }

    @Test
    void requiredValue_missing_isAProblem()
    {
        ConfigTable table = ConfigTable.of(Map.of(), "egress.routes[1]", "a route", KEYS);

        assertEquals("egress.routes[1].upstream: missing (expected: a pool name)", problem(() -> table.required("upstream", "a pool name")));
        assertEquals("fallback", table.text("upstream", "fallback"));
    }

    @Test
    void nestedTable_isCheckedLikeItsParent()
    {
        ConfigTable route = ConfigTable.of(Map.of("match", Map.of("domains", List.of("a"), "hosts", 1)), "egress.routes[0]", "a route", KEYS);

        assertEquals("egress.routes[0].match: unknown key hosts (expected: domains)",
            problem(() -> route.table("match", "{domains: [...]}", Set.of("domains"))));
        ConfigTable empty = ConfigTable.of(Map.of(), "egress.routes[0]", "a route", KEYS);
        assertEquals("egress.routes[0]: match (expected: {domains: [...]})",
            problem(() -> empty.table("match", "{domains: [...]}", Set.of("domains"))));
    }

    @Test
    void listItems_areNoneWhenTheValueIsNoList()
    {
        ConfigTable table = ConfigTable.of(Map.of("domains", "api.openai.com"), "egress.routes[0].match", "a match", KEYS);

        assertEquals(List.of(), table.items("domains"));
        assertEquals("egress.nodes.n1.timeout", table.named("egress.nodes.n1").at("timeout"));
    }
}
