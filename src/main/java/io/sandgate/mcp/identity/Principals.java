package io.sandgate.mcp.identity;

import java.time.Instant;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;

/** What token verifiers share: how scopes are read from claims and how a principal is made. */
final class Principals
{
    private Principals()
    {
    }

    static Principal of(String issuer, String subject, String clientId, Set<String> scopes, Instant expiresAt)
    {
        if (subject == null || subject.isBlank())
            throw new TokenRefusedException("the token names no subject");
        return new Principal(issuer, subject, clientId, scopes, expiresAt);
    }

    /**
     * The scopes granted: {@code scope} as RFC 8693 and RFC 7662 give it (a space-separated string),
     * and {@code scp} as some issuers give it (a list).
     */
    static Set<String> scopes(Object scope, Object scp)
    {
        Set<String> scopes = new HashSet<>();
        for (Object claim : new Object[] {scope, scp})
        {
            if (claim instanceof String text)
            {
                for (String item : text.trim().split("\\s+"))
                {
                    if (!item.isEmpty())
                        scopes.add(item);
                }
            }
            else if (claim instanceof Collection<?> items)
            {
                items.forEach(item -> scopes.add(String.valueOf(item)));
            }
        }
        return scopes;
    }
}
