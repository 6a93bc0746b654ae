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
     * @param upstreamPath path and query to request from the sandbox: in path mode prefix and id
     *        stripped, in host mode the whole path
     * @param setCookie session cookie update, or null
     * @param host the sandbox's own host in host mode; null in path mode, where the sandbox shares
     *        the gateway's origin
     */
    record Forward(String sandboxId, Source source, String upstreamPath, String setCookie, SandboxHost host) implements IngressDecision
    {
        /** A decision in path mode. */
        Forward(String sandboxId, Source source, String upstreamPath, String setCookie)
        {
            this(sandboxId, source, upstreamPath, setCookie, null);
        }

        /** Whether the sandbox is served on a host of its own rather than under the gateway's origin. */
        boolean hostMode()
        {
            return host != null;
        }
    }

    /**
     * @param status 308 (add the slash, keep the method) or 303 (grant consumed, GET the clean URL)
     * @param location where to
     * @param setCookie session cookie update, or null
     */
    record Redirect(int status, String location, String setCookie) implements IngressDecision
    {
    }

    /** The resolution steps, in the order they are tried: the host in host mode, the others in path mode. */
    enum Source
    {
        HOST, PATH, REFERER, COOKIE, HEADER;

        /** Made once: every proxied request's access note carries it. */
        private final String label = name().toLowerCase(Locale.ROOT);

        /** The name used in metrics and the access log. */
        public String label()
        {
            return label;
        }
    }
}
