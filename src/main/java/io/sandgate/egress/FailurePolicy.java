package io.sandgate.egress;

import java.io.EOFException;
import java.net.ConnectException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.WritePendingException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;

import io.sandgate.config.EgressConfig;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.client.HttpResponseException;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpStatus;

/**
 * What a failed egress attempt means, in one place: whether the node is to blame (which counts
 * towards ejecting it, and tells the agent that the node failed), and whether the exchange may be
 * tried again on another node. Each reason is written once, with why, as OkHttp's
 * {@code RetryAndFollowUpInterceptor.recover()} lists its own; {@link #blamesNode} and
 * {@link #mayRetry} are read top to bottom.
 *
 * <p>Retries go to another node, after an exponential back-off with full jitter, within the route's
 * retry count and the gateway's retry budget.
 */
final class FailurePolicy
{
    /** Methods whose repetition does no more than their first success (RFC 9110 section 9.2.2). */
    private static final Set<String> IDEMPOTENT = Set.of("GET", "HEAD", "OPTIONS", "PUT", "DELETE", "TRACE");

    /** How an attempt ended, as the request counter and the node's passive health see it. */
    enum Outcome
    {
        OK(true),
        /** A body stopped for holding a secret: the agent's doing, not a failed exchange. */
        BLOCKED(true),
        /** Failed, but not by the node's doing. */
        FAILURE(true),
        /** Failed by the node's doing: counts towards its passive ejection. */
        NODE_FAILURE(false);

        private final boolean nodeOk;

        Outcome(boolean nodeOk)
        {
            this.nodeOk = nodeOk;
        }

        /** Whether the attempt speaks for the node's health. */
        boolean nodeOk()
        {
            return nodeOk;
        }

        /** The {@code outcome} tag of the request counter. */
        String label()
        {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    /**
     * A failed attempt as its front-end saw it.
     *
     * @param failure what failed it
     * @param tunnel whether it was a CONNECT tunnel that did not open (nothing of the agent's sent)
     * @param responseStatus the status of the answer that had begun to arrive, 0 when none had
     * @param committed whether part of an answer has already reached the agent
     * @param method the agent's request method
     * @param hasBody whether the agent's request has a body
     * @param attempts how many attempts the exchange has made, this one included
     * @param route the exchange's route
     */
    record Attempt(Throwable failure, boolean tunnel, int responseStatus, boolean committed, String method, boolean hasBody, int attempts,
                   EgressConfig.Route route)
    {
        Attempt
        {
            Objects.requireNonNull(failure, "failure");
            Objects.requireNonNull(method, "method");
            Objects.requireNonNull(route, "route");
        }

        /** A CONNECT tunnel through a node that did not open. */
        static Attempt tunnel(Throwable failure, int attempts, EgressConfig.Route route)
        {
            return new Attempt(failure, true, 0, false, "CONNECT", false, attempts, route);
        }
    }

    /**
     * @param outcome how the attempt counts
     * @param retry whether the exchange tries another node (a retry budget token is already spent)
     */
    record Verdict(Outcome outcome, boolean retry)
    {
        boolean blamesNode()
        {
            return outcome == Outcome.NODE_FAILURE;
        }
    }

    /** The node answered for itself with a 5xx (marked by a node-error header): its failure, not the target's. */
    static final class NodeFailure extends Exception
    {
        NodeFailure(int status)
        {
            super("egress node answered " + status, null, false, false);
        }
    }

    private final List<String> nodeErrorHeaders;
    private final Duration backoff;
    private final RetryBudget budget;
    private final EgressMetrics metrics;

    FailurePolicy(EgressConfig config, EgressMetrics metrics)
    {
        this.nodeErrorHeaders = config.nodeErrorHeaders();
        this.backoff = config.retryBackoff();
        this.budget = new RetryBudget(config.retryBudget());
        this.metrics = metrics;
    }

    /** An exchange starts: it earns its share of the retry budget. */
    void exchangeStarted()
    {
        budget.deposit();
    }

    /** Judges a failed attempt. A retry it allows has spent a token of the retry budget. */
    Verdict judge(Attempt attempt)
    {
        boolean blamed = blamesNode(attempt);
        Outcome outcome = blamed ? Outcome.NODE_FAILURE
            : attempt.failure() instanceof GatewayException g && g.status() == HttpStatus.UNPROCESSABLE_ENTITY_422 ? Outcome.BLOCKED : Outcome.FAILURE;
        return new Verdict(outcome, mayRetry(attempt, blamed));
    }

    /**
     * Whether the node is to blame: it refused or dropped the connection, timed out before
     * answering, failed the CONNECT tunnel, or marked a 5xx as its own.
     */
    private static boolean blamesNode(Attempt attempt)
    {
        // A tunnel that did not open: the node refused the connection or the CONNECT, dropped it,
        // or did not answer it in time.
        if (attempt.tunnel())
            return true;
        for (Throwable t = attempt.failure(); t != null; t = t.getCause())
        {
            // The node answered with a 5xx it marked as its own (see isNodesOwnAnswer).
            if (t instanceof NodeFailure)
                return true;
            // The node refused the connection.
            if (t instanceof ConnectException)
                return true;
            // The node refused the CONNECT tunnel: Jetty's client reports its non-2xx answer so.
            if (t instanceof HttpResponseException)
                return true;
            // The node dropped the connection.
            if (t instanceof ClosedChannelException || t instanceof EOFException)
                return true;
            // Silence is the node's while no answer has begun; a slow target that has started
            // answering is not the node's fault.
            if (t instanceof TimeoutException)
                return attempt.responseStatus() == 0;
        }
        // Anything else, a 4xx or 5xx of the target's own above all, is not the node's doing.
        return false;
    }

    private boolean mayRetry(Attempt attempt, boolean blamed)
    {
        // Part of an answer has reached the agent: a second answer cannot follow it.
        if (attempt.committed())
            return false;
        // A failure that is not the node's would be the same through any other node, unless nothing
        // was sent at all.
        if (!blamed && !isUnsent(attempt.failure()))
            return false;
        // The route allows this many extra attempts.
        if (attempt.attempts() > attempt.route().retry())
            return false;
        // A tunnel that did not open carried nothing of the agent's: it may be opened elsewhere.
        if (!attempt.tunnel())
        {
            // A request that is not idempotent may have done its work before the node failed; only
            // a route that says so repeats it.
            if (!IDEMPOTENT.contains(attempt.method()) && !attempt.route().retryNonIdempotent())
                return false;
            // A body has been streamed to the failed node and cannot be replayed.
            if (attempt.hasBody())
                return false;
        }
        // Retries are a share of requests: when many fail at once, a sick egress is not drowned by
        // its own retries. Asked last, since asking spends a token.
        if (!budget.tryWithdraw())
        {
            metrics.retryDenied();
            return false;
        }
        metrics.retried();
        return true;
    }

    /**
     * Whether the request failed before any of it was written: Jetty's client failed a request on a
     * freshly opened CONNECT tunnel with a WritePendingException when the node's 200 was read before
     * the write of the CONNECT had returned. {@link NodeConnector} now makes such a write wait; should
     * a write still be refused so, nothing reached the target and it is not the node's fault: worth
     * another attempt, not an ejection.
     */
    private static boolean isUnsent(Throwable failure)
    {
        for (Throwable t = failure; t != null; t = t.getCause())
        {
            if (t instanceof WritePendingException)
                return true;
        }
        return false;
    }

    /**
     * Whether an answer is the node's own rather than the target's: a 5xx carrying one of the
     * node-error headers (RFC 9209 {@code Proxy-Status}, Squid's {@code X-Squid-Error}...). Such an
     * answer is turned into a {@link NodeFailure}.
     */
    boolean isNodesOwnAnswer(int status, HttpFields headers)
    {
        if (status < HttpStatus.INTERNAL_SERVER_ERROR_500)
            return false;
        for (String header : nodeErrorHeaders)
        {
            if (headers.getField(header) != null)
                return true;
        }
        return false;
    }

    /** How long to wait before the given retry (0 for the first): up to the back-off doubled per retry, full jitter. */
    long backoffMillis(int retry)
    {
        long cap = backoff.toMillis() << Math.min(retry, 10);
        return ThreadLocalRandom.current().nextLong(cap + 1);
    }

    /** What the agent is told when an exchange ends failed after {@code tried} nodes. */
    GatewayException answer(Throwable failure, Verdict verdict, int tried)
    {
        GatewayException mapped = Errors.map(failure, Errors.Peer.EGRESS);
        return verdict.blamesNode() && mapped.status() != HttpStatus.GATEWAY_TIMEOUT_504
            ? new GatewayException(HttpStatus.BAD_GATEWAY_502, "egress_node_failed", "the egress node failed (tried " + tried + ")")
            : mapped;
    }

    /** What the agent is told when no node opened its tunnel. */
    GatewayException tunnelFailed()
    {
        return new GatewayException(HttpStatus.BAD_GATEWAY_502, "egress_node_failed", "no egress node opened the tunnel");
    }
}
