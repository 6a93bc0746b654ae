package io.sandgate.egress;

import java.net.http.HttpResponse;

import io.sandgate.testing.GatewayExtension;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Credential injection with the {@code env} secret source: a gateway started with
 * {@code SANDGATE_SECRET_*} variables (which are secrets, not settings) reads the agent's token and
 * the real key from them.
 */
class EnvSecretsIT
{
    private static final String KEY = "sk-" + "proj-" + "E5nVk3yE5nVk3yE5nVk3".repeat(2);
    private static final String TOKEN = "sgt_env_agent_0123456789";

    private CredentialRoute route;

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(config -> route.configure(config)
        .environment("SANDGATE_SECRET_OPENAI", KEY)
        .environment("SANDGATE_SECRET_AGENT_TOKEN", TOKEN)
        .set("egress.secrets.source", "env"));

    @BeforeEach
    void start() throws Exception
    {
        route = CredentialRoute.start();
    }

    @AfterEach
    void stop() throws Exception
    {
        route.close();
    }

    @Test
    void envSource_secretVariablesAreNotSettings_andTheKeyFromOneIsInjected() throws Exception
    {
        HttpResponse<String> response = route.call(gateway, TOKEN);
        assertEquals(200, response.statusCode(), response.body());
        assertEquals("Bearer " + KEY, route.target.requests().get(0).header("Authorization"));
        assertFalse(gateway.sandgate().config().toString().contains(KEY), "the captured variables never print");
    }
}
