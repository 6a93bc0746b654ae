package io.sandgate.ingress;

import java.nio.charset.StandardCharsets;
import java.util.List;

import io.sandgate.net.Origins;

/**
 * The {@code Content-Security-Policy} that keeps a sandbox's pages to their own path in path mode.
 *
 * <p>In path mode every sandbox shares the gateway's origin, so the same-origin policy does not
 * stand between them: a script on {@code /vnc/2/} could {@code fetch('/vnc/1/...')}, open
 * {@code /vnc/1/websockify}, frame {@code /vnc/1/} and read it, or draw {@code /vnc/1/}'s images
 * onto a canvas and read the pixels, all with the user's cookie. The browser can be asked to refuse
 * all of these: every fetch directive ({@code default-src}, which {@code connect-src},
 * {@code frame-src}, {@code worker-src}, {@code img-src} and the others fall back to) names only
 * the sandbox's own path, and forms post only there. The policy is about confinement, not about
 * the sandbox's own script hygiene, so inline script, {@code eval}, {@code data:} and
 * {@code blob:} stay allowed. A page may also connect to the id-less paths noVNC 1.3 needs, which
 * route by the cookie's newest sandbox.</p>
 *
 * <p>What the gateway answers itself (a refusal, a redirect, a failed exchange, health) gets
 * {@link io.sandgate.web.NoScript}'s policy instead: a document with nothing to load, in an opaque
 * origin of its own, so that a sandbox can neither frame one of them nor open one in a window and
 * run its script there, outside its confinement. What path mode cannot prevent (a window a page
 * opens on another sandbox's page is still same-origin) is why host mode exists, and why
 * {@code ingress.path-mode} can be switched off.</p>
 */
final class SandboxPolicy
{
    /** Jetty's {@code HttpHeader} does not name it. */
    static final String HEADER = "Content-Security-Policy";
    /** For a sandbox's page whose origin cannot be named in a policy: nothing to load, and no access to the gateway's origin. */
    static final String REFUSAL = "default-src 'none'; sandbox";

    private static final String RELAXED = "'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval' data: blob:";

    private SandboxPolicy()
    {
    }

    /**
     * @param origin the gateway's origin as the client used it ({@code http://gw.example:8080})
     * @param own the sandbox's mount with its trailing slash, context path included: {@code /vnc/42/}
     * @param idless exact id-less paths a page may also connect to, such as {@code /vnc/websockify}
     * @return the policy; {@link #REFUSAL} when the origin cannot be named in a policy (an IPv6
     *         literal, a malformed Host), since confinement never falls back to no policy
     */
    static String confine(String origin, String own, List<String> idless)
    {
        String canonical;
        try
        {
            canonical = Origins.canonical(origin, "origin");
        }
        catch (IllegalArgumentException x)
        {
            return REFUSAL;
        }
        if (canonical.contains("["))
            return REFUSAL;
        boolean secure = canonical.startsWith("https:");
        String authority = canonical.substring(canonical.indexOf("://"));
        String http = (secure ? "https" : "http") + authority;
        String ws = (secure ? "wss" : "ws") + authority;
        String mount = encode(own);
        StringBuilder connect = new StringBuilder("data: blob: ").append(http).append(mount).append(' ').append(ws).append(mount);
        for (String path : idless)
            connect.append(' ').append(ws).append(encode(path));
        return "default-src " + RELAXED + " " + http + mount + " " + ws + mount
            + "; connect-src " + connect
            + "; form-action " + http + mount;
    }

    /**
     * A path as a policy may hold it: {@code ;}, {@code ,}, quotes and spaces would end the source
     * expression or the directive, so everything but unreserved characters and {@code /} is
     * percent-encoded (browsers decode both sides before comparing).
     */
    static String encode(String path)
    {
        StringBuilder encoded = new StringBuilder(path.length());
        for (byte b : path.getBytes(StandardCharsets.UTF_8))
        {
            char c = (char)(b & 0xff);
            if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || "-._~/%".indexOf(c) >= 0)
                encoded.append(c);
            else
                encoded.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16))).append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
        }
        return encoded.toString();
    }
}
