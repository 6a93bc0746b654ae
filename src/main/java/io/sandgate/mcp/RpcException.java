package io.sandgate.mcp;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandgate.web.GatewayException;

/**
 * An error whose JSON-RPC code the protocol fixes, with the {@code error.data} that goes with it,
 * where {@link JsonRpcErrors#code} could only guess from the gateway's code.
 */
final class RpcException extends GatewayException
{
    private final int rpcCode;
    private final JsonNode data;

    RpcException(int status, int rpcCode, String message, JsonNode data)
    {
        super(status, "mcp_" + (-rpcCode), message);
        this.rpcCode = rpcCode;
        this.data = data;
    }

    int rpcCode()
    {
        return rpcCode;
    }

    /** The error's {@code data}, or null. */
    JsonNode data()
    {
        return data;
    }
}
