package io.sandgate.egress;

import java.util.Locale;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.api.trace.Tracer;
import io.sandgate.config.EgressConfig;
import io.sandgate.tracing.Spans;
import io.sandgate.tracing.TraceAttributes;
import io.sandgate.tracing.TraceHeaders;
import org.eclipse.jetty.http.HttpFields;

/**
 * The spans of one egress exchange: the request's server span says which route and target, and
 * each attempt through a node is a client span of its own under it, so that a retry shows as a
 * second child with the node it moved to. {@link #NONE} (tracing off) does nothing. Used as
 * {@link Attempts} is, by one request at a time.
 */
final class AttemptSpans
{
    static final AttemptSpans NONE = new AttemptSpans(null, null, null);
    static final String ATTEMPT_SPAN = "egress attempt";

    private final Tracer tracer;
    private final Span request;
    private final EgressPlan plan;
    /** The current attempt's span, from its start to its outcome. */
    private Span attempt;

    /**
     * @param request the exchange's server span, named here after the route
     */
    AttemptSpans(Tracer tracer, Span request, EgressPlan plan)
    {
        this.tracer = tracer;
        this.request = request;
        this.plan = plan;
        if (request == null)
            return;
        request.setAttribute(TraceAttributes.FACE, "egress");
        request.setAttribute(TraceAttributes.EGRESS_ROUTE, plan.routeName());
        request.setAttribute(TraceAttributes.EGRESS_POOL, plan.route().pool());
        // The target's name only: its path and query may hold the injected key.
        request.setAttribute(TraceAttributes.SERVER_ADDRESS, plan.target().name());
    }

    /** An attempt starts through {@code node}. */
    void started(int number, NodeState node)
    {
        if (request == null)
            return;
        attempt = Spans.child(tracer, ATTEMPT_SPAN, SpanKind.CLIENT, request);
        attempt.setAttribute(TraceAttributes.EGRESS_ATTEMPT, number);
        attempt.setAttribute(TraceAttributes.EGRESS_ROUTE, plan.routeName());
        attempt.setAttribute(TraceAttributes.EGRESS_POOL, plan.route().pool());
        attempt.setAttribute(TraceAttributes.EGRESS_NODE, node.node().id());
        attempt.setAttribute(TraceAttributes.EGRESS_REGION, node.node().region());
        attempt.setAttribute(TraceAttributes.SERVER_ADDRESS, plan.target().name());
    }

    /** The current attempt ended as the failure policy judged it; a blocked body is the agent's doing, not a failure. */
    void ended(FailurePolicy.Outcome outcome)
    {
        if (attempt == null)
            return;
        attempt.setAttribute(TraceAttributes.EGRESS_OUTCOME, outcome.name().toLowerCase(Locale.ROOT));
        if (outcome != FailurePolicy.Outcome.OK && outcome != FailurePolicy.Outcome.BLOCKED)
            attempt.setStatus(StatusCode.ERROR);
        attempt.end();
        attempt = null;
        if (outcome == FailurePolicy.Outcome.BLOCKED)
            leakVerdict(true);
        else if (outcome == FailurePolicy.Outcome.OK)
            leakVerdict(false);
    }

    /**
     * Makes the target's handling of the current attempt its child: the agent's own traceparent
     * (sent on as the agent's other headers are) named the agent's span instead.
     */
    void addTraceHeaders(HttpFields.Mutable toTarget)
    {
        if (attempt == null)
            return;
        toTarget.remove(TraceHeaders.TRACESTATE);
        TraceHeaders.inject(attempt, toTarget::put);
    }

    /** What the leak scanner made of the exchange, on a route that scans. */
    void leakVerdict(boolean blocked)
    {
        if (request == null || plan.route().scan() == EgressConfig.ScanMode.OFF)
            return;
        request.setAttribute(TraceAttributes.LEAK_VERDICT, blocked ? "blocked" : "passed");
    }
}
