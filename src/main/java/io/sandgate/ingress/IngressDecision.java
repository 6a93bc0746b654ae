package io.sandgate.ingress;

import java.util.Locale;
import java.util.function.BiConsumer;

import io.sandgate.web.NoScript;
import org.eclipse.jetty.http.HttpHeader;

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
        public Forward(String sandboxId, Source source, String upstreamPath, String setCookie)
        {
            this(sandboxId, source, upstreamPath, setCookie, null);
        }

        /** Whether the sandbox is served on a host of its own rather than under the gateway's origin. */
        public boolean hostMode()
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
        /**
         * Its headers, as the gateway answers it itself: no page of a sandbox's, nor one that may host
         * a script ({@link NoScript}); it may carry a session cookie, and it must not be stored (a 308
         * is cacheable by default).
         *
         * @param add adds one header to the browser's response
         */
        public void addHeaders(BiConsumer<String, String> add)
        {
            NoScript.FIELDS.forEach(field -> add.accept(field.getName(), field.getValue()));
            if (setCookie != null)
                add.accept(HttpHeader.SET_COOKIE.asString(), setCookie);
            add.accept(HttpHeader.LOCATION.asString(), location);
            add.accept(HttpHeader.CACHE_CONTROL.asString(), "no-store");
        }
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
