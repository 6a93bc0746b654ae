package io.sandgate.mcp.identity;

/**
 * A bearer token the gateway does not take. The message is the gateway's own words, safe to show the
 * caller: it never repeats the token or what a library said about its contents.
 */
public final class TokenRefusedException extends RuntimeException
{
    public TokenRefusedException(String message)
    {
        super(message, null, false, false);
    }
}
