package io.sandgate.egress;

import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.testing.Gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The first egress pool as the admin API shows it, and its nodes, for tests to read their state. */
final class PoolView
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final ObjectMapper JSON = new ObjectMapper();

    private PoolView()
    {
    }

    static JsonNode pool(Gateway gateway, String adminToken) throws Exception
    {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(gateway.uri().resolve("/admin/egress/pools"))
            .header("Authorization", "Bearer " + adminToken).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, response.statusCode(), response.body());
        return JSON.readTree(response.body()).get(0);
    }

    static JsonNode node(Gateway gateway, String adminToken, String nodeId) throws Exception
    {
        for (JsonNode node : pool(gateway, adminToken).get("nodes"))
        {
            if (node.get("id").asText().equals(nodeId))
                return node;
        }
        throw new AssertionError("no node " + nodeId);
    }
}
