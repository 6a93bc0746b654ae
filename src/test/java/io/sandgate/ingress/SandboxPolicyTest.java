package io.sandgate.ingress;

import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The policy that keeps a sandbox's pages to their own path in path mode. That browsers enforce it
 * is shown in Chromium by {@code NoVncBrowserIT}; this checks what it says.
 */
class SandboxPolicyTest
{
    @Test
    void everyFetchDirective_namesOnlyTheSandboxsOwnPath_andTheIdlessWebSocket()
    {
        String policy = SandboxPolicy.confine("http://gw.example:8080", "/vnc/42/", List.of("/vnc/websockify"));

        assertEquals("default-src 'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval' data: blob: http://gw.example:8080/vnc/42/ ws://gw.example:8080/vnc/42/"
            + "; connect-src data: blob: http://gw.example:8080/vnc/42/ ws://gw.example:8080/vnc/42/ ws://gw.example:8080/vnc/websockify"
            + "; form-action http://gw.example:8080/vnc/42/", policy);
    }

    @Test
    void overHttps_theSecureSchemes_andTheCanonicalOrigin()
    {
        String policy = SandboxPolicy.confine("HTTPS://GW.example:443", "/sandgate/vnc/42/", List.of());

        assertTrue(policy.startsWith("default-src 'unsafe-inline' 'unsafe-eval' 'wasm-unsafe-eval' data: blob: https://gw.example/sandgate/vnc/42/ wss://gw.example/sandgate/vnc/42/;"), policy);
        assertFalse(policy.contains("http:") || policy.contains("ws:"), policy);
    }

    /** A policy that cannot name the sandbox's path confines it to nothing rather than to everything. */
    @ParameterizedTest
    @ValueSource(strings = {"http://[::1]:8080", "http://gw.example;script-src *", "http://gw example", "null", ""})
    void anOriginAPolicyCannotName_getsTheRefusalPolicy(String origin)
    {
        assertEquals(SandboxPolicy.REFUSAL, SandboxPolicy.confine(origin, "/vnc/42/", List.of("/vnc/websockify")));
    }

    @Test
    void charactersThatWouldEndASourceExpression_arePercentEncoded()
    {
        String policy = SandboxPolicy.confine("http://gw.example", "/vnc/a;b,c 'd'/", List.of());

        assertTrue(policy.contains("http://gw.example/vnc/a%3Bb%2Cc%20%27d%27/ "), policy);
        assertEquals(3, policy.split(";").length, policy);
    }

    @Test
    void theRefusalPolicy_loadsNothing_inAnOpaqueOrigin()
    {
        assertEquals("default-src 'none'; sandbox", SandboxPolicy.REFUSAL);
    }
}
