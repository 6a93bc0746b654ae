package io.sandgate.mcp.identity;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Base64;

import io.sandgate.core.Secret;

/**
 * The gateway's own client authentication at an authorization server (token exchange,
 * introspection): HTTP Basic as RFC 6749 §2.3.1 has an OAuth client send it, id and secret each
 * form-encoded before they are joined, so that a secret holding {@code :}, {@code %} or {@code +}
 * reaches the server as it is.
 */
final class ClientSecretBasic
{
    private ClientSecretBasic()
    {
    }

    /** The {@code Authorization} value; it holds the secret, so it is sent and never logged. */
    static String header(String clientId, Secret secret)
    {
        String pair = encode(clientId) + ":" + encode(secret.reveal());
        return "Basic " + Base64.getEncoder().encodeToString(pair.getBytes(StandardCharsets.UTF_8));
    }

    private static String encode(String value)
    {
        return URLEncoder.encode(value, StandardCharsets.UTF_8);
    }
}
