package io.sandgate.net;

import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * A host's registrable domain, the "site" browsers' SameSite rules go by, approximated: the last
 * two labels of the name, or the last three under a short list of two-label public suffixes
 * ({@code co.uk}, {@code com.au}, ...). Not the Public Suffix List, which the gateway does not ship:
 * under a suffix the list lacks (a hosting platform's, such as {@code github.io}) two hosts the real
 * list would call separate sites come out as one, so a warning built on this errs towards warning.
 * {@code localhost} is a top-level name here, as Chromium treats it: {@code gw.example.localhost}
 * and {@code 7.sbx.example.localhost} are one site, {@code example.localhost}. An IP address is a
 * site of its own.
 */
public final class Sites
{
    /** Second-level public suffixes under which registrations are common. */
    private static final Set<String> TWO_LABEL_SUFFIXES = Set.of(
        "co.uk", "org.uk", "me.uk", "ac.uk", "gov.uk", "net.uk", "ltd.uk", "plc.uk",
        "com.au", "net.au", "org.au", "edu.au", "gov.au", "co.nz", "net.nz", "org.nz",
        "co.jp", "ne.jp", "or.jp", "ac.jp", "co.kr", "or.kr", "com.cn", "net.cn", "org.cn",
        "com.br", "net.br", "org.br", "com.mx", "co.in", "net.in", "org.in", "co.za", "org.za",
        "com.sg", "com.hk", "com.tw", "co.il", "com.tr");

    private Sites()
    {
    }

    /** @param host a host name or IP literal, without a port */
    public static String registrableDomain(String host)
    {
        String name = host.toLowerCase(Locale.ROOT);
        if (name.endsWith("."))
            name = name.substring(0, name.length() - 1);
        if (IpLiteral.parse(name).isPresent() || IpLiteral.isNonCanonicalNumeric(name))
            return name;
        String[] labels = name.split("\\.");
        if (labels.length <= 2)
            return name;
        String lastTwo = labels[labels.length - 2] + "." + labels[labels.length - 1];
        return TWO_LABEL_SUFFIXES.contains(lastTwo) ? labels[labels.length - 3] + "." + lastTwo : lastTwo;
    }

    /**
     * The site a host pattern's hosts share with one of {@code origins}, if any: where a page of that
     * origin is same-site with every sandbox's host, and the browser sends the sandboxes' SameSite=Lax
     * cookies with its requests to them.
     *
     * @param hostPattern {@code ingress.host-pattern}, such as {@code {id}.sbx.example.com}
     * @param origins canonical origins
     * @return the shared site, or null
     */
    public static String sharedSite(String hostPattern, List<String> origins)
    {
        // A sandbox's host as the pattern makes it: "x.sbx.example.com" for {id}.sbx.example.com.
        String sandbox = registrableDomain(hostPattern.replace("{id}", "x").replace("{port}", "1"));
        for (String origin : origins)
        {
            String host = origin.substring(origin.indexOf("://") + 3);
            int colon = host.lastIndexOf(':');
            if (colon > host.lastIndexOf(']'))
                host = host.substring(0, colon);
            if (registrableDomain(host).equals(sandbox))
                return sandbox;
        }
        return null;
    }
}
