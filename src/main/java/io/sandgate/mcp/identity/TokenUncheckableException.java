package io.sandgate.mcp.identity;

/**
 * A token the gateway cannot judge now: the issuer's key set or its introspection endpoint does
 * not answer. Not the client's fault, so not a 401 (which sends a client for a new token, in vain),
 * but a 503 to retry. The message is the gateway's own words.
 */
public final class TokenUncheckableException extends RuntimeException
{
    public TokenUncheckableException(String message)
    {
        super(message, null, false, false);
    }
}
