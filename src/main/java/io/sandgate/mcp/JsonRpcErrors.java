package io.sandgate.mcp;

import java.io.IOException;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.NullNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import io.sandgate.web.RequestAttribute;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

/**
 * The MCP face's errors as JSON-RPC 2.0 error responses, which is what MCP clients parse:
 * {@code {"jsonrpc":"2.0","id":...,"error":{"code":...,"message":"..."}}}. The status and the
 * message are {@link Errors}' as for every face; only the body's shape is MCP's. Codes follow the
 * official TypeScript SDK's Streamable HTTP server: JSON-RPC's own for a body that is not JSON or not
 * a message, {@code -32001} for an unknown session, {@code -32000} for the other transport errors.
 *
 * @see <a href="https://www.jsonrpc.org/specification#error_object">JSON-RPC 2.0 error object</a>
 */
final class JsonRpcErrors implements Errors.Body
{
    static final int PARSE_ERROR = -32700;
    static final int INVALID_REQUEST = -32600;
    static final int INTERNAL_ERROR = -32603;
    /** The SDKs' code for transport failures ("connection closed"). */
    static final int TRANSPORT_ERROR = -32000;
    /** The SDKs' code for "session not found" and for a request that timed out. */
    static final int NOT_FOUND_OR_TIMEOUT = -32001;
    static final int INVALID_PARAMS = -32602;
    /** A method the server does not have; 2026-07-28 answers it with 404, as for the methods it removed. */
    static final int METHOD_NOT_FOUND = -32601;
    /** 2026-07-28: an {@code Mcp-*} header is missing or says something else than the body. */
    static final int HEADER_MISMATCH = -32020;
    /** 2026-07-28: the request's protocol revision is one the server does not speak; data lists those it does. */
    static final int UNSUPPORTED_PROTOCOL_VERSION = -32022;

    /** {@link GatewayException#code()} of a body that is not JSON. */
    static final String NOT_JSON = "parse_error";
    /** {@link GatewayException#code()} of JSON that is not a JSON-RPC 2.0 message. */
    static final String NOT_A_MESSAGE = "invalid_request";
    /** {@link GatewayException#code()} of a session the gateway does not know or that ended. */
    static final String UNKNOWN_SESSION = "session_not_found";

    /** The request's JSON-RPC message once parsed, so that an error answers its id. */
    private static final RequestAttribute<JsonRpc> PARSED = RequestAttribute.of("mcp.parsed", JsonRpc.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Notes the request's parsed message, whose id later errors answer. */
    static void parsed(HttpServletRequest request, JsonRpc rpc)
    {
        PARSED.set(request, rpc);
    }

    @Override
    public void write(HttpServletRequest request, HttpServletResponse response, GatewayException error, String message) throws IOException
    {
        JsonRpc rpc = PARSED.get(request);
        response.setContentType("application/json");
        response.getWriter().write(body(rpc == null ? null : rpc.id(), error, message));
    }

    /** The error response; {@code id} null when the request had none or it could not be read. */
    static String body(JsonNode id, GatewayException error, String message)
    {
        ObjectNode body = JSON.createObjectNode().put("jsonrpc", "2.0");
        body.set("id", id == null ? NullNode.getInstance() : id);
        ObjectNode object = body.putObject("error").put("code", code(error)).put("message", message);
        if (error instanceof RpcException rpc && rpc.data() != null)
            object.set("data", rpc.data());
        return body.toString();
    }

    static int code(GatewayException error)
    {
        if (error instanceof RpcException rpc)
            return rpc.rpcCode();
        return switch (error.code())
        {
            case NOT_JSON -> PARSE_ERROR;
            case NOT_A_MESSAGE -> INVALID_REQUEST;
            case UNKNOWN_SESSION, "upstream_timeout" -> NOT_FOUND_OR_TIMEOUT;
            case "internal_error" -> INTERNAL_ERROR;
            default -> TRANSPORT_ERROR;
        };
    }
}
