package io.sandgate.egress;

import java.io.EOFException;
import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.WritePendingException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeoutException;
import javax.net.ssl.SSLException;

import io.sandgate.config.EgressConfig;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.client.HttpResponseException;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpStatus;

/**
 * What a failed egress attempt means, in one place: whether the node is to blame (which counts
 * towards ejecting it, and tells the agent that the node failed), and whether the exchange may be
 * tried again on another node. Each reason is written once, with why, as OkHttp's
 * {@code RetryAndFollowUpInterceptor.recover()} lists its own; {@link #blamesNode} and
 * {@link #mayRetry} are read top to bottom.
 *
 * <p>A node is blamed only for what the node itself did (DESIGN, "Egress fault attribution"): it
 * refused or dropped the connection, or stayed silent, before it had answered anything. A node
 * that answers, even with an error, is alive; a target that is down, slow or refusing, reached
 * through any number of nodes by any number of agents, ejects none of them. Once the tunnel is
 * open, what comes through it is the target's.
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
        /**
         * The node answered the tunnel with a refusal: the node's failure only if another node
         * reaches the same target while no other node fails it (see {@link Attempts#record}), the
         * target's otherwise.
         */
        REFUSED(true),
        /**
         * The node accepted the connection and stayed silent until the attempt timed out: a hung
         * node, or a live one still trying a target that drops packets. Judged as a refusal is.
         */
        UNANSWERED(true),
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
     * @param sent whether the request had started out through an open tunnel (so some of it may have reached the target)
     * @param nodeAnswered whether the node had sent the gateway any bytes since the attempt started
     * @param committed whether part of an answer has already reached the agent
     * @param method the agent's request method
     * @param replayable whether the agent's request can be sent again whole (no body, or a body held in full)
     * @param attempts how many attempts the exchange has made, this one included
     * @param route the exchange's route
     */
    record Attempt(Throwable failure, boolean sent, boolean nodeAnswered, boolean committed, String method, boolean replayable, int attempts,
                   EgressConfig.Route route)
    {
        Attempt
        {
            Objects.requireNonNull(failure, "failure");
            Objects.requireNonNull(method, "method");
            Objects.requireNonNull(route, "route");
        }

        /** A CONNECT tunnel through a node that did not open: nothing of the agent's was sent. */
        static Attempt tunnel(Throwable failure, boolean nodeAnswered, int attempts, EgressConfig.Route route)
        {
            return new Attempt(failure, false, nodeAnswered, false, "CONNECT", true, attempts, route);
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

    /**
     * A node's own error page in answer to a plain-http request, in place of the target's answer:
     * the node could not reach the target (or gave up on it). It fails the attempt as a refused
     * tunnel does.
     */
    static final class NodeError extends IOException
    {
        NodeError(int status, String reason)
        {
            super("the egress node answered " + status + " " + reason + " itself");
        }
    }

    private final Duration backoff;
    private final RetryBudget budget;
    private final EgressMetrics metrics;
    /** What marks a node's own answer: a header's name, or a name and the start of its value. */
    private final List<HttpField> nodeErrorMarks;

    FailurePolicy(EgressConfig config, EgressMetrics metrics)
    {
        this.nodeErrorMarks = config.nodeErrorHeaders().stream().map(FailurePolicy::mark).toList();
        this.backoff = config.retryBackoff();
        this.budget = new RetryBudget(config.retryBudget());
        this.metrics = metrics;
    }

    /** An exchange starts: it earns its share of the retry budget. */
    void exchangeStarted()
    {
        budget.deposit();
    }

    private static HttpField mark(String entry)
    {
        int colon = entry.indexOf(':');
        return colon < 0 ? new HttpField(entry.trim(), null) : new HttpField(entry.substring(0, colon).trim(), entry.substring(colon + 1).trim());
    }

    /**
     * Whether a response to a plain-http request (absolute form, through the node) is the node's
     * own error page rather than the target's answer: a 5xx carrying a header of
     * {@code egress.node-error-headers}. squid marks its pages with {@code X-Squid-Error}, other
     * proxies with {@code Proxy-Status} (RFC 9209) or {@code X-Proxy-Error}; tinyproxy marks them
     * only by {@code Server: tinyproxy/...}, a header it leaves to the target on the answers it
     * relays (to which it adds a Via instead). A target's own 4xx and 5xx carry none of these and
     * pass as they are; a target's 4xx is never taken for the node's.
     *
     * @return the failure to end the attempt with, or null when the answer is the target's
     */
    NodeError nodeError(int status, String reason, HttpFields headers)
    {
        if (status < 500)
            return null;
        for (HttpField mark : nodeErrorMarks)
        {
            for (HttpField field : headers.getFields(mark.getName()))
            {
                if (mark.getValue() == null || field.getValue().regionMatches(true, 0, mark.getValue(), 0, mark.getValue().length()))
                    return new NodeError(status, reason);
            }
        }
        return null;
    }

    /** Judges a failed attempt. A retry it allows has spent a token of the retry budget. */
    Verdict judge(Attempt attempt)
    {
        boolean unsent = !attempt.sent() || isUnsent(attempt.failure());
        Outcome outcome;
        if (attempt.failure() instanceof GatewayException g && g.status() == HttpStatus.UNPROCESSABLE_ENTITY_422)
            outcome = Outcome.BLOCKED;
        else if (blamesNode(attempt, unsent))
            outcome = Outcome.NODE_FAILURE;
        else if ((unsent && isRefusal(attempt.failure())) || has(attempt.failure(), NodeError.class))
            outcome = Outcome.REFUSED;
        else if (unsent && !attempt.nodeAnswered() && isSilence(attempt))
            outcome = Outcome.UNANSWERED;
        else
            outcome = Outcome.FAILURE;
        return new Verdict(outcome, mayRetry(attempt, unsent));
    }

    /** Whether the node is to blame: it refused or dropped the connection, or stayed silent, before it had answered anything. */
    private static boolean blamesNode(Attempt attempt, boolean unsent)
    {
        // The tunnel was open: what comes through it (a reset, silence, a TLS alert) is the
        // target's. A node that dies meanwhile is found by its probes and the next connections.
        if (!unsent)
            return false;
        // The gateway stopped the exchange itself (a secret in the body).
        if (has(attempt.failure(), GatewayException.class))
            return false;
        // The node answered, if only to refuse a tunnel to a target it could not reach: it is alive.
        // Its refusal is judged by whether another node reaches the target (Outcome.REFUSED). The
        // refusal is itself the answer, whether or not its bytes were noted in time (the soak saw
        // refusals judged before the read that brought them had been noted).
        if (attempt.nodeAnswered() || isRefusal(attempt.failure()))
            return false;
        // It took the connection and said nothing: it may be hung, or still be trying a target that
        // drops packets, which through an idle node looks the same. Judged as a refusal is
        // (Outcome.UNANSWERED), so that one agent calling a blackholed target ejects no node.
        if (isSilence(attempt))
            return false;
        // Refused or dropped without a byte, or never took the connection: the node's own doing.
        return true;
    }

    /**
     * Whether the attempt timed out on a connection the node had accepted. Jetty reports a connect
     * that never completed as a {@link SocketTimeoutException}, silence on an open connection (the
     * idle or total timeout) as a {@link TimeoutException}.
     */
    private static boolean isSilence(Attempt attempt)
    {
        return has(attempt.failure(), TimeoutException.class) && !has(attempt.failure(), SocketTimeoutException.class);
    }

    private boolean mayRetry(Attempt attempt, boolean unsent)
    {
        // Part of an answer has reached the agent: a second answer cannot follow it.
        if (attempt.committed())
            return false;
        // The gateway decided (a secret in the body...): another node would be told the same.
        if (has(attempt.failure(), GatewayException.class))
            return false;
        // The route allows this many extra attempts (one by default).
        if (attempt.attempts() > attempt.route().retry())
            return false;
        // A body that was streamed on and not held cannot be sent again.
        if (!attempt.replayable())
            return false;
        if (unsent)
        {
            // The target refused TLS: another node would reach the same target.
            if (has(attempt.failure(), SSLException.class))
                return false;
            // Otherwise nothing of the request reached the target: any method may go to another node.
        }
        else
        {
            // A request that is not idempotent may have done its work before the exchange failed; only
            // a route that says so repeats it.
            if (!IDEMPOTENT.contains(attempt.method()) && !attempt.route().retryNonIdempotent())
                return false;
            // Only a dropped connection is worth another node (the node carrying it may have died), or
            // a node's own error page (it could not reach the target; another may); a target that is
            // slow would be as slow through any other.
            if (!isDropped(attempt.failure()) && !has(attempt.failure(), NodeError.class))
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
     * a write still be refused so, nothing reached the target.
     */
    private static boolean isUnsent(Throwable failure)
    {
        return has(failure, WritePendingException.class);
    }

    /** Whether the node answered the tunnel's CONNECT with a refusal (any non-2xx). */
    private static boolean isRefusal(Throwable failure)
    {
        // Jetty's client reports the node's non-2xx answer to its CONNECT so; the CONNECT face's own handshake as TunnelRefused.
        return has(failure, HttpResponseException.class) || has(failure, TunnelReply.TunnelRefused.class);
    }

    /** Whether the connection was closed or reset under the exchange. */
    private static boolean isDropped(Throwable failure)
    {
        return has(failure, ClosedChannelException.class) || has(failure, EOFException.class) || has(failure, SocketException.class);
    }

    private static boolean has(Throwable failure, Class<? extends Throwable> type)
    {
        for (Throwable t = failure; t != null; t = t.getCause())
        {
            if (type.isInstance(t))
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
        // The node said it could not open the tunnel, or answered a plain-http request with its own
        // error page: most likely the target is down or refusing.
        if (verdict.outcome() == Outcome.REFUSED)
            return new GatewayException(HttpStatus.BAD_GATEWAY_502, "egress_target_unreachable", "no egress node could reach the target (tried " + tried + ")");
        // A write refused on a fresh tunnel is Jetty's IllegalStateException, not an IOException: it
        // is still a failed exchange with the node, not an error of the gateway's own (500).
        if (isUnsent(failure))
            return Errors.map(new IOException("request not sent", failure), Errors.Peer.EGRESS);
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
