package io.sandgate.mcp;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.McpConfig;
import io.sandgate.config.McpQuota;
import io.sandgate.core.Audit;
import io.sandgate.web.GatewayException;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import org.eclipse.jetty.http.HttpStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where every {@code tools/call} is judged, on every transport and revision: the caller's tool
 * policy ({@link ToolGuard}), then the server's quota for the caller, counted across the replicas.
 * Each decision goes to the audit log and the call counters. A request without a tool call passes
 * untouched, and a server without a quota costs no round trip.
 * <p>
 * When the store cannot count, calls go: a quota is a budget, not a wall, and an outage of the
 * store must not stop every agent's tools. {@code sandgate.mcp.quota.unchecked} counts such calls.
 */
final class CallGate
{
    /** JSON-RPC code of a call over its quota: in the range JSON-RPC leaves to servers, after HTTP's 429. */
    static final int OVER_QUOTA = -32029;
    private static final Logger LOG = LoggerFactory.getLogger(CallGate.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final long WARN_EVERY_MILLIS = 60_000;

    /**
     * What the gateway answers for the request itself, or {@link #GO} when its calls may go.
     *
     * @param answer the JSON-RPC message
     * @param status the HTTP status, where the transport carries one
     */
    record Verdict(String answer, int status, long retryAfterSeconds)
    {
        static final Verdict GO = new Verdict(null, HttpStatus.OK_200, 0);

        boolean goes()
        {
            return answer == null;
        }
    }

    private final CallQuotas quotas;
    private final MeterRegistry registry;
    private final boolean principalLabel;
    private final Clock clock;
    private final Executor workers;
    private final Counter unchecked;
    private final AtomicLong lastWarning = new AtomicLong();

    /**
     * @param principalLabel whether the call counters are labelled by caller ({@code mcp.principal-label})
     * @param workers where a request goes on once the store has counted its calls
     */
    CallGate(CallQuotas quotas, MeterRegistry registry, boolean principalLabel, Clock clock, Executor workers)
    {
        this.quotas = quotas;
        this.registry = registry;
        this.principalLabel = principalLabel;
        this.clock = clock;
        this.workers = workers;
        this.unchecked = Counter.builder("sandgate.mcp.quota.unchecked").description("Tool calls let through uncounted: the store could not count them")
            .register(registry);
    }

    /**
     * Judges the request's tool calls.
     *
     * @param request in asynchronous mode already: a call that goes is audited when it ends
     * @throws RpcException for a batch holding a refused call (see {@link ToolGuard#refusal})
     */
    CompletableFuture<Verdict> admit(HttpServletRequest request, McpConfig.Server server, RequestChecks.Caller caller, JsonRpc rpc)
    {
        List<JsonNode> calls = new ArrayList<>();
        for (JsonNode message : rpc.messages())
        {
            if ("tools/call".equals(message.path("method").asText()))
                calls.add(message);
        }
        if (calls.isEmpty())
            return CompletableFuture.completedFuture(Verdict.GO);
        long started = clock.millis();
        String refusal = ToolGuard.refusal(caller.tools(server), rpc);
        if (refusal != null)
        {
            decided(server, caller, calls, "denied", started);
            return CompletableFuture.completedFuture(new Verdict(refusal, HttpStatus.OK_200, 0));
        }
        List<CallQuotas.Limit> limits = server.quota().map(quota -> limits(quota, server, caller, calls)).orElse(List.of());
        // A quota of some tools only leaves the others' calls with no limit: no round trip for them.
        if (limits.isEmpty())
            return CompletableFuture.completedFuture(go(request, server, caller, calls, started));
        // Not on the thread that completes the count: the store's own I/O thread, where the request's
        // next steps (a store call among them) must not run, and Redisson refuses a blocking call.
        return quotas.take(limits).handleAsync((wait, failure) ->
        {
            if (failure != null)
            {
                unchecked.increment();
                long now = clock.millis();
                long last = lastWarning.get();
                if (now - last >= WARN_EVERY_MILLIS && lastWarning.compareAndSet(last, now))
                    LOG.warn("MCP quotas cannot be counted (the store does not answer): tool calls go uncounted until it does");
                return go(request, server, caller, calls, started);
            }
            if (wait == 0)
                return go(request, server, caller, calls, started);
            decided(server, caller, calls, "over_quota", started);
            long seconds = Math.max(1, (wait + 999) / 1000);
            if (!rpc.isSingle())
                throw GatewayException.tooMany("over_quota", "the batch's tool calls are over this caller's quota on MCP server " + server.name(), seconds);
            return new Verdict(overQuota(calls.get(0), server, seconds), HttpStatus.TOO_MANY_REQUESTS_429, seconds);
        }, workers);
    }

    /**
     * The limits the calls count against: the server's for the caller, once per call, and each
     * tool's. Keys share the caller's hash tag; a tool is in a key only when the configuration names
     * it, so that a caller cannot make keys up.
     */
    private static List<CallQuotas.Limit> limits(McpQuota quota, McpConfig.Server server, RequestChecks.Caller caller, List<JsonNode> calls)
    {
        String tag = "{" + server.name() + ":" + caller.quotaKey() + "}";
        List<CallQuotas.Limit> limits = new ArrayList<>();
        for (JsonNode call : calls)
        {
            if (quota.calls() > 0)
                limits.add(new CallQuotas.Limit(tag, quota.calls(), quota.window()));
            String tool = call.path("params").path("name").asText();
            quota.limitOf(tool).ifPresent(max -> limits.add(new CallQuotas.Limit(tag + ":tool:" + tool, max, quota.window())));
        }
        return limits;
    }

    private static String overQuota(JsonNode call, McpConfig.Server server, long seconds)
    {
        ObjectNode error = JSON.createObjectNode().put("jsonrpc", "2.0");
        error.set("id", call.path("id"));
        ObjectNode body = error.putObject("error").put("code", OVER_QUOTA)
            .put("message", "Too many calls: this caller's quota on MCP server " + server.name() + " is used up; retry after " + seconds + " s");
        body.putObject("data").put("retryAfter", seconds);
        return error.toString();
    }

    private Verdict go(HttpServletRequest request, McpConfig.Server server, RequestChecks.Caller caller, List<JsonNode> calls, long started)
    {
        request.getAsyncContext().addListener(new AsyncListener()
        {
            @Override
            public void onComplete(AsyncEvent event)
            {
                decided(server, caller, calls, "allowed", started);
            }

            @Override
            public void onTimeout(AsyncEvent event)
            {
            }

            @Override
            public void onError(AsyncEvent event)
            {
            }

            @Override
            public void onStartAsync(AsyncEvent event)
            {
            }
        });
        return Verdict.GO;
    }

    private void decided(McpConfig.Server server, RequestChecks.Caller caller, List<JsonNode> calls, String outcome, long started)
    {
        long latency = clock.millis() - started;
        for (JsonNode call : calls)
        {
            Audit.toolCall(caller.display(), server.name(), call.path("params").path("name").asText(), outcome, latency);
            Counter.Builder counter = Counter.builder("sandgate.mcp.tool.calls").description("MCP tool calls by server and outcome (allowed, denied, over_quota)")
                .tag("server", server.name()).tag("outcome", outcome);
            if (principalLabel)
                counter.tag("principal", caller.display());
            counter.register(registry).increment();
        }
    }
}
