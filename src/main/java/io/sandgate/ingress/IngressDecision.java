package io.sandgate.ingress;

import java.util.Locale;

/** What to do with an ingress request: forward it to a sandbox, or redirect the browser. */
public sealed interface IngressDecision
{
    /** The Set-Cookie header value to send, or null. */
    String setCookie();

    /**
     * @param sandboxId the sandbox
     * @param source which step of resolution found it
     * @param upstreamPath path and query to request from the sandbox, prefix and id stripped
     * @param setCookie session cookie update, or null
     */
    record Forward(String sandboxId, Source source, String upstreamPath, String setCookie) implements IngressDecision
    {
    }

    /**
     * @param status 308 (add the slash, keep the method) or 303 (grant consumed, GET the clean URL)
     * @param location where to
     * @param setCookie session cookie update, or null
     */
    record Redirect(int status, String location, String setCookie) implements IngressDecision
    {
    }

    /** The resolution steps, in the order they are tried. */
    enum Source
    {
        PATH, REFERER, COOKIE, HEADER;

        /** The name used in metrics and the access log. */
        public String label()
        {
            return name().toLowerCase(Locale.ROOT);
        }
    }
}
