package io.sandgate.mcp.identity;

import io.sandgate.core.Digests;

/** Bearer tokens as the gateway may hold them: by digest, never as they are. */
final class Tokens
{
    private Tokens()
    {
    }

    static String digest(String token)
    {
        return Digests.sha256Hex(token);
    }
}
