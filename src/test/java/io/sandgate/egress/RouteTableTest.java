package io.sandgate.egress;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.sandgate.config.ConfigLoader;
import io.sandgate.config.EgressConfig;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** First match wins, and a reload replaces the table whole. */
class RouteTableTest
{
    private static List<EgressConfig.Route> routes(List<Map<String, ?>> table)
    {
        Map<String, Object> values = new HashMap<>();
        values.put("egress.routes", table);
        values.put("egress.pools", Map.of(
            "main", Map.of("nodes", List.of(Map.of("id", "m1", "address", "192.0.2.1:3128"))),
            "other", Map.of("nodes", List.of(Map.of("id", "o1", "address", "192.0.2.2:3128")))));
        return ConfigLoader.fromValues(values).egress().routes();
    }

    private static final List<EgressConfig.Route> TABLE = routes(List.of(
        Map.of("match", Map.of("domains", List.of("api.openai.com"), "task_type", "llm"), "upstream", "other"),
        Map.of("match", Map.of("domains", List.of("*.openai.com")), "upstream", "main"),
        Map.of("match", Map.of("domains", List.of("*"), "task_type", "web"), "upstream", "other")));

    @Test
    void find_firstMatchWins_byHostAnyCase_andTaskType()
    {
        RouteTable table = new RouteTable(TABLE);
        assertEquals("other", table.find("API.OpenAI.com", "llm").orElseThrow().pool());
        assertEquals("main", table.find("api.openai.com", "web").orElseThrow().pool(), "the glob comes first for other task types");
        assertEquals("other", table.find("example.org", "web").orElseThrow().pool());
        assertEquals(Optional.empty(), table.find("example.org", null));
    }

    @Test
    void reload_replacesTheTable()
    {
        RouteTable table = new RouteTable(TABLE);
        assertEquals(1, table.reload(routes(List.of(Map.of("match", Map.of("domains", List.of("example.org")), "upstream", "main")))));
        assertEquals("main", table.find("example.org", null).orElseThrow().pool());
        assertTrue(table.find("api.openai.com", "llm").isEmpty());
    }

    @Test
    void longestTimeout_isThatOfTheSlowestRoute_orZeroWithoutRoutes()
    {
        RouteTable table = new RouteTable(routes(List.of(
            Map.of("match", Map.of("domains", List.of("a.example")), "upstream", "main", "timeout", "5s"),
            Map.of("match", Map.of("domains", List.of("b.example")), "upstream", "main", "timeout", "90s"))));
        assertEquals(Duration.ofSeconds(90), table.longestTimeout());
        table.reload(List.of());
        assertEquals(Duration.ZERO, table.longestTimeout());
    }
}
