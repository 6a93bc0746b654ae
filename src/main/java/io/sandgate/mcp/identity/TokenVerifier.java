package io.sandgate.mcp.identity;

/** Turns a bearer token into the principal it vouches for, or refuses it. */
interface TokenVerifier
{
    /**
     * @throws TokenRefusedException when the token is not valid for this server: malformed, signed
     *         by no key of its issuers, expired or not yet valid, for another audience, inactive
     * @throws TokenUncheckableException when what judges tokens (the key set, introspection) does not answer
     */
    Principal verify(String token);
}
