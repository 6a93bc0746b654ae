package io.sandgate.admin;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.Gateway;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.RunningGateway;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Grants and revocations through the admin API: what they answer, and what they refuse. */
class AdminGrantsIT
{
    private static final String TOKEN = "admin-grants-it-token-0123456789";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
        .followRedirects(HttpClient.Redirect.NEVER).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("admin.token", TOKEN)
        .set("ingress.access", "signed")
        .set("ingress.cookie.secret", "admin-grants-it-secret-0123456789")
        .set("ingress.static-routes", Map.of("41", "127.0.0.1:1", "42", "127.0.0.1:2")));

    private static HttpResponse<String> admin(Gateway target, String method, String path, String body) throws Exception
    {
        return HTTP.send(HttpRequest.newBuilder(target.uri().resolve("/admin" + path)).header("Authorization", "Bearer " + TOKEN)
            .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body)).build(),
            HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void aGrantIsALinkTheIngressRedeemsOnce() throws Exception
    {
        HttpResponse<String> made = admin(gateway, "POST", "/grants/42", "{\"subject\":\"alice\",\"ttl\":\"2m\",\"sessionLimit\":\"10m\"}");
        assertEquals(200, made.statusCode(), made.body());
        JsonNode grant = JSON.readTree(made.body());
        assertTrue(grant.get("path").asText().startsWith("/vnc/42/?sandgate_grant=" + grant.get("token").asText()), made.body());

        HttpRequest follow = HttpRequest.newBuilder(gateway.uri().resolve(grant.get("path").asText())).build();
        assertEquals(303, HTTP.send(follow, HttpResponse.BodyHandlers.discarding()).statusCode());
        assertEquals(403, HTTP.send(follow, HttpResponse.BodyHandlers.discarding()).statusCode());
    }

    @Test
    void aGrantNeedsASubject_andDurationsItCanRead() throws Exception
    {
        assertEquals(400, admin(gateway, "POST", "/grants/42", null).statusCode());
        assertEquals(400, admin(gateway, "POST", "/grants/42", "{\"ttl\":\"5m\"}").statusCode());
        HttpResponse<String> badTtl = admin(gateway, "POST", "/grants/42", "{\"subject\":\"a\",\"ttl\":\"soon\"}");
        assertEquals(400, badTtl.statusCode());
        assertTrue(badTtl.body().contains("ttl"), badTtl.body());
        assertEquals(400, admin(gateway, "POST", "/grants/42", "{\"subject\":\"a\",\"sessionLimit\":\"0s\"}").statusCode());
        assertEquals(400, admin(gateway, "POST", "/grants/abc", "{\"subject\":\"a\"}").statusCode(), "an id the pattern refuses");
    }

    @Test
    void withoutASharedSecret_grantsAreRefused_namingTheSetting() throws Exception
    {
        try (RunningGateway unkeyed = RunningGateway.start(config -> config.set("admin.token", TOKEN)))
        {
            HttpResponse<String> refused = admin(unkeyed, "POST", "/grants/42", "{\"subject\":\"a\"}");
            assertEquals(409, refused.statusCode(), refused.body());
            assertTrue(refused.body().contains("ingress.cookie.secret"), refused.body());
        }
    }

    @Test
    void aRevocationStampsTheRoute_andASandboxWithoutOneIs404() throws Exception
    {
        HttpResponse<String> revoked = admin(gateway, "POST", "/revoke/41", null);
        assertEquals(200, revoked.statusCode(), revoked.body());
        JsonNode stamped = JSON.readTree(revoked.body());
        assertEquals("127.0.0.1:1", stamped.get("target").asText());
        assertEquals(stamped.get("revokedBefore"), JSON.readTree(admin(gateway, "GET", "/routes/41", null).body()).get("revokedBefore"));

        assertEquals(404, admin(gateway, "POST", "/revoke/9999", null).statusCode());
        assertEquals(405, admin(gateway, "GET", "/revoke/41", null).statusCode());
    }

    @Test
    void inPathMode_linksAreUnderThePrefix() throws Exception
    {
        JsonNode grant = JSON.readTree(admin(gateway, "POST", "/grants/42", "{\"subject\":\"alice\"}").body());
        JsonNode route = JSON.readTree(admin(gateway, "GET", "/routes/42", null).body());

        assertEquals(grant.get("path").asText(), grant.get("url").asText(), "relative without a public origin, as before");
        assertEquals("/vnc/42/", route.get("desktop").asText(), "the dashboard's Open desktop");
    }

    /**
     * With host mode on, the links the gateway hands out lead to the sandbox's own host, never into
     * path mode, whose pages share the gateway's origin with every other sandbox's (issue 52, finding 1).
     */
    @Test
    void inHostMode_grantLinksAndTheDashboardsDesktops_areOnTheSandboxsOwnHost() throws Exception
    {
        try (RunningGateway hostMode = RunningGateway.start(config -> config
            .set("admin.token", TOKEN)
            .set("ingress.access", "signed")
            .set("ingress.cookie.secret", "admin-grants-it-secret-0123456789")
            .set("ingress.host-pattern", "{id}.sbx.example.localhost")
            .set("server.public-origins", List.of("https://gw.example:8443", "http://other.example"))
            .set("ingress.static-routes", Map.of("42", "127.0.0.1:2"))))
        {
            JsonNode grant = JSON.readTree(admin(hostMode, "POST", "/grants/42", "{\"subject\":\"alice\"}").body());
            JsonNode route = JSON.readTree(admin(hostMode, "GET", "/routes/42", null).body());
            JsonNode listed = JSON.readTree(admin(hostMode, "GET", "/routes", null).body()).get("items").get(0);

            String query = "?sandgate_grant=" + grant.get("token").asText();
            assertEquals("https://42.sbx.example.localhost:8443/" + query, grant.get("url").asText(), "the first public origin's scheme and port");
            assertEquals("/" + query, grant.get("path").asText(), "the path on the sandbox's host");
            assertEquals("https://42.sbx.example.localhost:8443/", route.get("desktop").asText());
            assertEquals(route.get("desktop"), listed.get("desktop"));
            // The link opens the sandbox on its own host: a host-only cookie.
            RawHttp.Response followed = RawHttp.get(hostMode.port(), "42.sbx.example.localhost:" + hostMode.port(), grant.get("path").asText());
            assertEquals(303, followed.status(), followed.body());
            assertTrue(followed.header("Set-Cookie").contains("Path=/;"), followed.headers().toString());
        }
    }
}
