package io.sandgate.ingress;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.PreEncodedHttpField;

/**
 * The confinement policy field ({@link SandboxPolicy}) of a sandbox for pages of an origin, built
 * once per pair while they fit. Pre-encoded: the policy is some 400 bytes on every answer, and Jetty
 * copies such a field's bytes instead of checking each character of its value again. It copies them
 * unchecked, though, and the origin is the client's: a value with anything but printable ASCII in it
 * stays a plain field, which Jetty sanitises as it writes it.
 */
final class Confinements
{
    /** The origin comes from the client, hence the bound. */
    private static final int MAX_POLICIES = 4096;

    private final String mount;
    private final List<String> idless;
    private final Map<PolicyKey, HttpField> policies = new ConcurrentHashMap<>();

    /**
     * @param mount the gateway's mount, context path included, with its trailing slash: {@code /vnc/}
     * @param idless exact id-less paths a page may also connect to
     */
    Confinements(String mount, List<String> idless)
    {
        this.mount = mount;
        this.idless = idless;
    }

    HttpField field(String origin, String sandboxId)
    {
        PolicyKey key = new PolicyKey(sandboxId, origin);
        HttpField policy = policies.get(key);
        if (policy != null)
            return policy;
        String value = SandboxPolicy.confine(origin, mount + sandboxId + "/", idless);
        policy = isPrintableAscii(value) ? new PreEncodedHttpField(SandboxPolicy.HEADER, value) : new HttpField(SandboxPolicy.HEADER, value);
        // A crude bound: a client can make up origins, and rebuilding a policy is cheap enough.
        if (policies.size() >= MAX_POLICIES)
            policies.clear();
        policies.put(key, policy);
        return policy;
    }

    /** A pair as a key of its own: joining the two as text took a copy and a hash of both per request. */
    private record PolicyKey(String sandboxId, String origin)
    {
    }

    static boolean isPrintableAscii(String value)
    {
        for (int i = 0; i < value.length(); i++)
        {
            char c = value.charAt(i);
            if (c < 0x20 || c > 0x7E)
                return false;
        }
        return true;
    }
}
