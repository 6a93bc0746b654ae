package io.sandgate.mcp.identity;

/** Turns a bearer token into the principal it vouches for, or refuses it. */
interface TokenVerifier
{
    /**
     * @throws TokenRefusedException when the token is not valid for this server: malformed, signed
     *         by no key of its issuers, expired or not yet valid, for another audience, inactive
     */
    Principal verify(String token);
}
