package io.sandgate.config;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

import io.sandgate.core.Secret;

/**
 * The ingress session cookie.
 *
 * @param name cookie name
 * @param secret HMAC key; empty means a random key is made at start (cookies die with the process)
 * @param ttl lifetime of one sandbox entry in the cookie
 * @param secure when to add the Secure attribute
 * @param maxSandboxes how many sandboxes one cookie may carry (one per open tab)
 */
public record CookieConfig(String name, Optional<Secret> secret, Duration ttl, SecureMode secure, int maxSandboxes)
{
    public enum SecureMode
    {
        AUTO, ALWAYS, NEVER
    }

    public CookieConfig
    {
        Objects.requireNonNull(secret, "secret");
    }
}
