package io.sandgate.mcp;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * DNS rebinding against the MCP face: a page on {@code evil.example} whose name resolves to the
 * gateway sends {@code Host: evil.example} and {@code Origin: http://evil.example}. "Same origin as
 * the Host" would let it through; only loopback, {@code server.public-origins} and
 * {@code mcp.allowed-origins} may pass.
 */
class McpOriginIT
{
    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
        + "\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}";

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("server.public-origins", List.of("https://gw.example"))
        .set("mcp.allowed-origins", List.of("https://ide.example"))
        .set("mcp.servers", List.of(Map.of("name", "tools", "url", "http://127.0.0.1:1/mcp", "transport", "streamable"))));

    @Test
    void rebindingHostAndOrigin_isRefused_andTheRefusalNamesTheSetting() throws Exception
    {
        String answer = post(gateway, "evil.example.com", "http://evil.example.com");
        assertTrue(answer.startsWith("HTTP/1.1 403"), answer);
        assertTrue(answer.contains("server.public-origins"), answer);
    }

    @Test
    void loopbackConfiguredAndFaceOrigins_pass_lookalikesDoNot() throws Exception
    {
        String host = "127.0.0.1:" + gateway.internalPort();
        // Past the origin check, the face finds the upstream unreachable: 502, not 403.
        for (String origin : List.of("http://" + host, "http://localhost:" + gateway.internalPort(), "https://gw.example", "https://GW.example:443", "https://ide.example"))
            assertNotEquals("403", status(post(gateway, host, origin)), origin);
        for (String origin : List.of("https://gw.example.evil", "http://gw.example", "https://gw.example:8443", "null", "http://7.sbx.localhost:" + gateway.internalPort()))
            assertEquals("403", status(post(gateway, host, origin)), origin);
    }

    private static String status(String answer)
    {
        return answer.substring(9, 12);
    }

    /** A raw POST: the JDK's client will not send a Host of our choosing. */
    private static String post(Gateway gateway, String host, String origin) throws Exception
    {
        try (Socket socket = new Socket("127.0.0.1", gateway.internalPort()))
        {
            socket.setSoTimeout(10_000);
            byte[] body = INITIALIZE.getBytes(StandardCharsets.UTF_8);
            String head = "POST /mcp/tools/mcp HTTP/1.1\r\nHost: " + host + "\r\nOrigin: " + origin + "\r\nContent-Type: application/json\r\n"
                + "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: " + body.length + "\r\nConnection: close\r\n\r\n";
            OutputStream out = socket.getOutputStream();
            out.write(head.getBytes(StandardCharsets.US_ASCII));
            out.write(body);
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
