package io.sandgate.testing;

import java.util.List;
import java.util.Map;

import io.sandgate.config.ConfigException;
import io.sandgate.config.SandgateConfig;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class GatewayConfigTest
{
    @Test
    void defaults_areLoopbackOnAFreePort()
    {
        SandgateConfig config = new GatewayConfig().build();

        assertEquals("127.0.0.1", config.server().host());
        assertEquals(0, config.server().port());
    }

    @Test
    void laterValues_replaceEarlierOnes_asOverridesDo()
    {
        GatewayConfig config = new GatewayConfig().set("ingress.access", "open");
        GatewayConfig.defaults().andThen(c -> c.set("ingress.access", "signed")).accept(config);

        assertEquals("signed", config.values().get("ingress.access"));
        assertEquals("SIGNED", config.build().ingress().access().name());
    }

    @Test
    void nestedValues_passAsTheYamlWouldGiveThem()
    {
        GatewayConfig config = new GatewayConfig().setAll(Map.of(
            "mcp.servers", List.of(Map.of("name", "x", "url", "http://127.0.0.1:1/mcp"))));

        assertEquals("x", config.build().mcp().servers().get(0).name());
    }

    @Test
    void badKeysAndValues_areRefusedWithTheKeyNamed()
    {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new GatewayConfig().set(" ", "x")).getMessage().contains("expected"));
        assertTrue(assertThrows(NullPointerException.class, () -> new GatewayConfig().set("admin.token", null)).getMessage().contains("admin.token"));
        String problem = assertThrows(ConfigException.class, () -> new GatewayConfig().set("ingress.prefx", "/x/").build()).getMessage();
        assertTrue(problem.contains("ingress.prefx"), problem);
    }

    @Test
    void values_cannotBeChangedBehindTheBuildersBack()
    {
        GatewayConfig config = new GatewayConfig();

        assertThrows(UnsupportedOperationException.class, () -> config.values().put("server.port", "1"));
    }
}
