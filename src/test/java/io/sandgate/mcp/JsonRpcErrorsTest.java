package io.sandgate.mcp;

import java.net.ConnectException;
import java.util.concurrent.TimeoutException;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.core.StoreUnavailableException;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which JSON-RPC error each failure of the MCP face becomes; the status stays what {@link Errors#map} says. */
class JsonRpcErrorsTest
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private static int code(Throwable failure)
    {
        return JsonRpcErrors.code(Errors.map(failure, Errors.Peer.MCP_SERVER));
    }

    @Test
    void bodies_thatAreNotJson_areParseErrors_andOtherJson_invalidRequests()
    {
        assertEquals(-32700, JsonRpcErrors.code(assertThrows(GatewayException.class, () -> JsonRpc.parse("{oops"))));
        assertEquals(-32600, JsonRpcErrors.code(assertThrows(GatewayException.class, () -> JsonRpc.parse("{\"jsonrpc\":\"2.0\"}"))));
        assertEquals(-32600, JsonRpcErrors.code(assertThrows(GatewayException.class, () -> JsonRpc.parse("[]"))));
    }

    @Test
    void unknownSessions_andTimeouts_are32001_asTheSdksSayThem()
    {
        assertEquals(-32001, JsonRpcErrors.code(RequestChecks.unknownSession("unknown MCP session")));
        assertEquals(-32001, code(new TimeoutException("no answer from 10.0.0.7")));
        assertEquals(504, Errors.map(new TimeoutException(), Errors.Peer.MCP_SERVER).status());
    }

    @Test
    void transportFailures_are32000_andTheUnexpected_internalErrors()
    {
        assertEquals(-32000, code(new ConnectException("10.0.0.7:8080")));
        assertEquals(-32000, code(new StoreUnavailableException("redis down", null)));
        assertEquals(503, Errors.map(new StoreUnavailableException("redis down", null), Errors.Peer.MCP_SERVER).status());
        assertEquals(-32000, code(GatewayException.forbidden("origin")));
        assertEquals(-32603, code(new IllegalStateException("bug")));
    }

    @Test
    void body_answersTheRequestsId_whenItHasOne() throws Exception
    {
        GatewayException error = Errors.map(new ConnectException("10.0.0.7:8080"), Errors.Peer.MCP_SERVER);
        JsonNode withId = JSON.readTree(JsonRpcErrors.body(JsonRpc.parse("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"ping\"}").id(), error, error.getMessage()));
        assertEquals("\"x\"", withId.get("id").toString());
        assertEquals("2.0", withId.get("jsonrpc").asText());
        assertEquals(-32000, withId.at("/error/code").asInt());
        assertTrue(withId.at("/error/message").asText().contains("MCP server") && !withId.toString().contains("10.0.0.7"), withId.toString());

        for (String noOneId : new String[] {"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}",
            "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"},{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}]"})
        {
            JsonNode body = JSON.readTree(JsonRpcErrors.body(JsonRpc.parse(noOneId).id(), error, error.getMessage()));
            assertTrue(body.get("id").isNull(), body.toString());
        }
    }
}
