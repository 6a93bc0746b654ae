package io.sandgate.config;

import java.util.List;

/**
 * Host globs as routes, credentials, agent policies and the passthrough list write them: an exact
 * name, {@code *.example.com} for any of its subdomains (not the name itself), and, where a list
 * may say "any host", {@code *}. One reading for all of them, so that a host one list takes is
 * taken by another written the same way.
 */
public final class DomainGlobs
{
    private DomainGlobs()
    {
    }

    /**
     * @param anyHost whether {@code *} stands for every host (not for a credential, which must
     *        name where its key may go)
     */
    public static boolean matches(List<String> globs, String host, boolean anyHost)
    {
        for (String glob : globs)
        {
            if (anyHost && glob.equals("*") || glob.equals(host) || glob.startsWith("*.") && host.endsWith(glob.substring(1)))
                return true;
        }
        return false;
    }
}
