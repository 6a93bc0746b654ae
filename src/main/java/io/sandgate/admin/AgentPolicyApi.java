package io.sandgate.admin;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.config.AgentPolicy;
import io.sandgate.egress.AgentPolicies;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;

/**
 * {@code GET|PUT /egress/agents/{id}/policy}: a configured agent's policy, as in force on every
 * replica, and its replacement at run time. A PUT body is the whole policy, in the shape of
 * {@code egress.agents[].policy} (every key optional: what it leaves out is off); it is checked whole
 * before anything changes (400 with the reason), kept in the store and in force on every replica
 * within a second. 404 for an id no configured agent has.
 */
public final class AgentPolicyApi
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String PATH = "/egress/agents/{id}/policy";

    private AgentPolicyApi()
    {
    }

    public static List<AdminServlet.Route> routes(AgentPolicies policies)
    {
        return List.of(
            new AdminServlet.Route("GET", PATH, call -> describe(call.id(), policies)),
            new AdminServlet.Route("PUT", PATH, call ->
            {
                String id = call.id();
                if (policies.of(id).isEmpty())
                    throw GatewayException.notFound("no agent " + id);
                AgentPolicy policy = parse(call.body());
                try
                {
                    policies.set(id, policy);
                }
                catch (RuntimeException x)
                {
                    // The store did not take it: nothing changed, on any replica.
                    throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE_503, "store_unavailable", "the policy could not be stored; nothing changed");
                }
                return describe(id, policies);
            }));
    }

    private static AgentPolicy parse(JsonNode body)
    {
        if (body == null || !body.isObject())
            throw GatewayException.badRequest("policy: " + (body == null ? "no body" : body.getNodeType().name().toLowerCase(Locale.ROOT)) + " (expected: a JSON object {domains, mode, budgets})");
        try
        {
            return AgentPolicy.parse(JSON.convertValue(body, Map.class), "policy");
        }
        catch (IllegalArgumentException x)
        {
            throw GatewayException.badRequest(x.getMessage());
        }
    }

    private static Map<String, Object> describe(String id, AgentPolicies policies)
    {
        AgentPolicies.InForce inForce = policies.of(id).orElseThrow(() -> GatewayException.notFound("no agent " + id));
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("agent", id);
        view.put("source", inForce.setAtRunTime() ? "admin" : "config");
        view.put("policy", inForce.policy().describe());
        return view;
    }
}
