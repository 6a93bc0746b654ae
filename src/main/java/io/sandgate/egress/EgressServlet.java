package io.sandgate.egress;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ListIterator;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;

import io.sandgate.config.EgressConfig;
import io.opentelemetry.api.trace.Span;
import io.sandgate.leak.Redactor;
import io.sandgate.tracing.TraceAttributes;
import io.sandgate.web.AccessNote;
import io.sandgate.web.Errors;
import io.sandgate.web.GatewayException;
import io.sandgate.web.LogContext;
import io.sandgate.web.NoScript;
import io.sandgate.web.RequestAttribute;
import io.sandgate.web.ServerSpan;
import io.sandgate.web.StreamingProxyServlet;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.client.AsyncRequestContent;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Servlet glue of the egress face, base-URL mode: {@code /egress/{host}/{path}} goes to
 * {@code https://{host}/{path}} (or http where the route says so) through an egress node. The
 * {@link EgressPlanner} decides, {@link BodyScan} reads bodies for secrets, the
 * {@link FailurePolicy} judges failed attempts; this class runs the proxy's steps in order.
 */
public final class EgressServlet extends StreamingProxyServlet
{
    private static final Logger LOG = LoggerFactory.getLogger(EgressServlet.class);
    /** Response header naming the node that carried the exchange. */
    public static final String NODE = "X-Sandgate-Egress-Node";
    /** Response header set when a sticky session had to move to another node. */
    public static final String STICKY = "X-Sandgate-Sticky";
    /** The servlet path of base-URL requests (the servlet is mapped at {@code /egress/*}). */
    static final String PATH = "/egress";
    private static final RequestAttribute<EgressExchange> EXCHANGE = RequestAttribute.of("egress.exchange", EgressExchange.class);
    private static final RequestAttribute<Planning> PLANNING = RequestAttribute.of("egress.planning", Planning.class);
    /** Set on requests that came in as absolute-form forward-proxy requests: their target is plain http. */
    public static final RequestAttribute<Boolean> FORWARD_PROXY = RequestAttribute.of("egress.forward-proxy", Boolean.class);
    /** Set on requests that came from inside an inspected CONNECT tunnel: their target is https. */
    public static final RequestAttribute<TlsInspection.Tunnel> INSPECTED = RequestAttribute.of("egress.inspected", TlsInspection.Tunnel.class);

    /** Headers of the agent's that are the gateway's to read and end here. */
    private static final Set<String> CONSUMED = Set.of(EgressPlanner.TASK_TYPE.toLowerCase(Locale.ROOT), EgressPlanner.SESSION.toLowerCase(Locale.ROOT),
        HttpHeader.X_FORWARDED_FOR.lowerCaseName(), HttpHeader.FORWARDED.lowerCaseName());

    private final Egress egress;

    public EgressServlet(Egress egress)
    {
        this.egress = egress;
    }

    /** A plan whose target was still being resolved when the request let its thread go. */
    private record Planning(CompletableFuture<EgressPlan> plan)
    {
    }

    /**
     * Plans the call, then proxies it. While the target's name is being resolved the request waits
     * in async mode, holding no thread, and comes back here by dispatch once the lookup has answered
     * or its deadline has passed.
     */
    @Override
    protected void service(HttpServletRequest request, HttpServletResponse response) throws ServletException, IOException
    {
        AccessNote.face(request, AccessNote.Face.EGRESS);
        Planning planning = PLANNING.get(request);
        PLANNING.set(request, null);
        CompletableFuture<EgressPlan> planned = planning == null ? plan(request) : planning.plan();
        if (!planned.isDone())
        {
            PLANNING.set(request, new Planning(planned));
            AsyncContext async = request.startAsync();
            // The lookup's deadline ends the wait.
            async.setTimeout(0);
            planned.whenComplete((plan, failure) -> async.dispatch());
            return;
        }
        try
        {
            EgressPlan plan = planned.join();
            LogContext.put(LogContext.Field.ROUTE, plan.routeName());
            Span span = ServerSpan.of(request);
            if (span != null)
                span.updateName(TraceAttributes.namePart(request.getMethod()) + " egress " + plan.routeName());
            Attempts attempts = egress.start(plan, span);
            if (!attempts.next())
                throw GatewayException.unavailable("no egress node available in pool " + plan.route().pool());
            LogContext.put(LogContext.Field.NODE, attempts.node().node().id());
            EXCHANGE.set(request, new EgressExchange(plan, attempts));
        }
        catch (RuntimeException x)
        {
            GatewayException error = Errors.map(x, Errors.Peer.EGRESS);
            Span span = ServerSpan.of(request);
            // The planner read the path, the query and the headers for secrets before any attempt.
            if (span != null && LeakGuard.SECRET_DETECTED.equals(error.code()))
                span.setAttribute(TraceAttributes.LEAK_VERDICT, "blocked");
            Errors.write(request, response, error);
            return;
        }
        super.service(request, response);
    }

    /** The planner's answer; a call it refused before any lookup is a failed plan like the others. */
    private CompletableFuture<EgressPlan> plan(HttpServletRequest request)
    {
        try
        {
            String uri = request.getRequestURI();
            int start = request.getContextPath().length() + "/egress/".length();
            // "/egress" alone names no target: the planner refuses the empty path as it does "/egress/".
            String path = uri.length() >= start ? uri.substring(start) : "";
            TlsInspection.Tunnel tunnel = INSPECTED.get(request);
            EgressPlan.Entry entry = tunnel != null ? EgressPlan.Entry.INSPECTED
                : Boolean.TRUE.equals(FORWARD_PROXY.get(request)) ? EgressPlan.Entry.FORWARD_PROXY : EgressPlan.Entry.BASE_URL;
            return egress.planner().plan(entry, path, request.getQueryString(), RequestHeaders.of(request),
                tunnel == null ? Optional.empty() : tunnel.agent());
        }
        catch (RuntimeException x)
        {
            return CompletableFuture.failedFuture(x);
        }
    }

    @Override
    protected String rewriteTarget(HttpServletRequest clientRequest)
    {
        return EXCHANGE.get(clientRequest).plan.uri();
    }

    /**
     * The request goes out on the chosen node's own client, whose proxy is that node. A plain-http
     * request goes on a connection of its own, opened for it (see {@link NodeClients#oneShot}): a
     * pooled one may have been closed by the node meanwhile, and a request that failed on it could
     * not be told from one the node had passed on.
     */
    @Override
    protected Request newProxyRequest(HttpServletRequest request, String rewrittenTarget)
    {
        EgressExchange exchange = EXCHANGE.get(request);
        NodeState node = exchange.attempts.node();
        return (exchange.plan.target().scheme().equals("http") ? egress.clients().oneShot(node) : egress.clients().traffic(node)).newRequest(rewrittenTarget).tag(exchange.plan.target())
            .method(request.getMethod())
            .attribute(CLIENT_REQUEST_ATTRIBUTE, request);
    }

    /**
     * Whether an agent's header reaches the target as the agent sent it: not the hop-by-hop ones
     * (RFC 9110, section 7.6.1), which end at the gateway, nor those {@link #copyRequestHeaders}
     * removes, nor, on a route that injects a key, the API-key headers and the header the key goes
     * in (and the header of the token of a request with placeholders, which the planner leaves out
     * too). The leak scanner reads exactly these: a secret anywhere else leaks nowhere, and reading
     * the injected key itself would refuse every call of the route.
     */
    static boolean forwards(String name, Optional<Credentials.Injection> injection)
    {
        String lower = name.toLowerCase(Locale.ROOT);
        if (HOP_HEADERS.contains(lower) || CONSUMED.contains(lower))
            return false;
        return injection.isEmpty() || !(Credentials.TOKEN_HEADERS.stream().anyMatch(name::equalsIgnoreCase)
            || injection.get().header().filter(name::equalsIgnoreCase).isPresent());
    }

    /** The agent's own routing headers stay here; nothing says which agent or gateway made the call. */
    @Override
    protected void copyRequestHeaders(HttpServletRequest clientRequest, Request proxyRequest)
    {
        super.copyRequestHeaders(clientRequest, proxyRequest);
        EgressExchange exchange = EXCHANGE.get(clientRequest);
        proxyRequest.headers(headers ->
        {
            CONSUMED.forEach(headers::remove);
            if (BodyScan.resizesRequests(exchange.route()))
                headers.remove(HttpHeader.CONTENT_LENGTH); // a redacted body has another length: send it chunked
            if (exchange.route().scan() == EgressConfig.ScanMode.REDACT)
                redactValues(headers); // before the key goes in, which must reach the target whole
            exchange.plan.placeholders().applyTo(headers);
            exchange.plan.injection().ifPresent(injection ->
            {
                // The internal token stops here, wherever the SDK put it; the real key takes its place.
                Credentials.TOKEN_HEADERS.forEach(headers::remove);
                injection.header().ifPresent(name -> headers.put(name, injection.value()));
            });
            if (BodyScan.readsResponses(exchange.plan))
                headers.put(HttpHeader.ACCEPT_ENCODING, "identity"); // one compressed all the same is decoded to be read, or refused (BodyDecoder)
            exchange.attempts.spans().addTraceHeaders(headers);
        });
    }

    /** On a redacting route a secret in a header's value goes as [REDACTED]; the planner refused one in a name. */
    private void redactValues(HttpFields.Mutable headers)
    {
        Redactor redactor = egress.leaks().redactor();
        for (ListIterator<HttpField> fields = headers.listIterator(); fields.hasNext(); )
        {
            HttpField field = fields.next();
            String value = redactor.text(field.getValue());
            if (!Objects.equals(value, field.getValue()))
                fields.set(new HttpField(field.getName(), value));
        }
    }

    @Override
    protected void addProxyHeaders(HttpServletRequest clientRequest, Request proxyRequest)
    {
        // No Via or Forwarded: an agent's outbound call must not reveal internal addresses.
    }

    @Override
    protected void sendProxyRequest(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Request proxyRequest)
    {
        EgressExchange exchange = EXCHANGE.get(clientRequest);
        EgressPlan.Timeouts timeouts = exchange.plan.timeouts();
        long left = Math.max(1, TimeUnit.NANOSECONDS.toMillis(timeouts.total().toNanos() - (System.nanoTime() - exchange.start)));
        // The hard limit is 1.5x the route's timeout: an exchange whose region failed over while it
        // was in flight may use the extra half to finish instead of being cut with the region.
        proxyRequest.timeout(left * 3 / 2, TimeUnit.MILLISECONDS);
        proxyRequest.idleTimeout(timeouts.idle().toMillis(), TimeUnit.MILLISECONDS);
        NodeState node = exchange.attempts.node();
        Attempts attempts = exchange.attempts;
        // Begun means the node has opened the tunnel, or, for plain http, that the request is about
        // to be written to the node: from then on, bytes may reach the target.
        AtomicLong sentAt = new AtomicLong();
        proxyRequest.onRequestBegin(begun ->
        {
            sentAt.set(System.nanoTime());
            attempts.sent();
        });
        proxyRequest.onResponseBegin(answered -> attempts.timed(EgressMetrics.Phase.FIRST_BYTE, System.nanoTime() - sentAt.get()));
        exchange.proxyRequest = proxyRequest;
        exchange.cancelDeadline();
        exchange.deadline = egress.later(left, () ->
        {
            if (!exchange.attempts.regionFailingOver(node))
                proxyRequest.abort(new TimeoutException("total timeout " + timeouts.total() + " exceeded"));
        });
        super.sendProxyRequest(clientRequest, proxyResponse, proxyRequest);
    }

    /**
     * A node's own error page, answering a plain-http request it could not carry, fails the attempt
     * before anything of it reaches the agent, as a refused tunnel would (see
     * {@link FailurePolicy#nodeError}).
     */
    @Override
    protected void onServerResponseHeaders(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse)
    {
        EgressExchange exchange = EXCHANGE.get(clientRequest);
        if (exchange.plan.target().scheme().equals("http"))
        {
            FailurePolicy.NodeError error = egress.policy().nodeError(serverResponse.getStatus(), serverResponse.getReason(), serverResponse.getHeaders());
            if (error != null)
            {
                serverResponse.abort(error);
                return;
            }
        }
        BodyScan scan = BodyScan.response(egress.leaks(), exchange.plan);
        BodyDecoder decoder;
        try
        {
            // The target was asked for an uncompressed answer; one compressed all the same is read decoded, or refused.
            decoder = scan == null ? null : BodyDecoder.of(serverResponse.getHeaders().getValuesList(HttpHeader.CONTENT_ENCODING));
        }
        catch (GatewayException unreadable)
        {
            serverResponse.abort(unreadable);
            return;
        }
        super.onServerResponseHeaders(clientRequest, proxyResponse, serverResponse);
        exchange.responseScan = scan;
        exchange.responseDecoder = decoder;
        if (decoder != null)
            proxyResponse.setHeader(HttpHeader.CONTENT_ENCODING.asString(), null); // the agent gets the body decoded
        if (scan != null && (scan.resizes() || decoder != null))
            proxyResponse.setHeader(HttpHeader.CONTENT_LENGTH.asString(), null);
        proxyResponse.setHeader(NODE, exchange.attempts.node().node().id());
        if (exchange.attempts.repinned())
            proxyResponse.setHeader(STICKY, "repinned");
    }

    /**
     * A target that repeats the injected key in a header (a redirect's Location carrying the query,
     * a debug echo) must not hand it to the agent; its body is read for the key too
     * ({@link BodyScan#response}).
     */
    @Override
    protected String filterServerResponseHeader(HttpServletRequest clientRequest, Response serverResponse, String headerName, String headerValue)
    {
        String value = super.filterServerResponseHeader(clientRequest, serverResponse, headerName, headerValue);
        return value == null || !EXCHANGE.get(clientRequest).plan.sendsKeys() ? value : egress.leaks().redactor().text(value);
    }

    /**
     * A body small enough is held as it is read, so that an attempt that fails before the target got
     * it (or an idempotent one that may be repeated) can send it again through another node.
     */
    @Override
    protected Request.Content proxyRequestContent(HttpServletRequest request, HttpServletResponse response, Request proxyRequest) throws IOException
    {
        if (request.getContentLengthLong() > ReplayableBody.LIMIT)
            return super.proxyRequestContent(request, response, proxyRequest);
        ReplayableBody body = new ReplayableBody();
        EXCHANGE.get(request).body = body;
        request.getInputStream().setReadListener(newReadListener(request, response, proxyRequest, body));
        return body.content();
    }

    /**
     * Request bodies are counted against the route's {@code max_body_size} (a declared length was
     * judged by the planner already) and read through the leak scanner ({@link BodyScan#request}).
     */
    @Override
    protected ReadListener newReadListener(HttpServletRequest request, HttpServletResponse response, Request proxyRequest, AsyncRequestContent content)
    {
        BodyScan scan = BodyScan.request(egress.leaks(), EXCHANGE.get(request).route());
        return new CheckingReader(request, response, proxyRequest, content, scan);
    }

    /**
     * Counts each chunk against the limit, feeds it to the scanner when there is one and sends on
     * what passes. A body of undeclared length that passes the limit, or a hit on a blocking route,
     * aborts the exchange: the node may have seen the request's head and a part of its body, never
     * the whole request.
     */
    private final class CheckingReader extends StreamReader
    {
        private final HttpServletRequest request;
        private final Request proxyRequest;
        private final AsyncRequestContent content;
        private final BodyScan scan;
        private long read;

        CheckingReader(HttpServletRequest request, HttpServletResponse response, Request proxyRequest, AsyncRequestContent content, BodyScan scan)
        {
            super(request, response, proxyRequest, content);
            this.request = request;
            this.proxyRequest = proxyRequest;
            this.content = content;
            this.scan = scan;
        }

        @Override
        protected void onRequestContent(HttpServletRequest request, Request proxyRequest, AsyncRequestContent content,
                                        byte[] buffer, int offset, int length, Callback callback)
        {
            read += length;
            EXCHANGE.get(request).requestBytes += length;
            EgressConfig.Route route = EXCHANGE.get(request).route();
            if (read > route.maxBodySize())
            {
                refuse(EgressPlanner.bodyTooLarge(route), callback);
                return;
            }
            ByteBuffer chunk = ByteBuffer.wrap(buffer, offset, length);
            if (scan == null)
            {
                content.write(chunk, callback);
                return;
            }
            BodyScan.Step step = scan.feed(chunk);
            if (step.blocked() != null)
                refuse(step.blocked(), callback);
            else if (step.output().hasRemaining())
                content.write(step.output(), callback);
            else
                callback.succeeded();
        }

        private void refuse(GatewayException refusal, Callback callback)
        {
            callback.failed(refusal);
            current(request, proxyRequest).abort(refusal);
        }

        @Override
        public void onAllDataRead()
        {
            if (scan == null)
            {
                super.onAllDataRead();
                return;
            }
            BodyScan.Step last = scan.finish();
            if (last.blocked() != null)
            {
                current(request, proxyRequest).abort(last.blocked());
                return;
            }
            if (last.output().hasRemaining())
                content.write(last.output(), Callback.NOOP);
            super.onAllDataRead();
        }
    }

    /** The request of the exchange's current attempt: a retry sends the body on another one. */
    private static Request current(HttpServletRequest request, Request first)
    {
        Request current = EXCHANGE.get(request).proxyRequest;
        return current == null ? first : current;
    }

    /**
     * Response bodies that are read (of routes that scan them, and of routes that inject a key) go
     * through the scanner before reaching the agent.
     */
    @Override
    protected void onResponseContent(HttpServletRequest request, HttpServletResponse response, Response proxyResponse,
                                     byte[] buffer, int offset, int length, Callback callback)
    {
        EgressExchange exchange = EXCHANGE.get(request);
        exchange.responseBytes += length;
        if (exchange.responseScan == null)
        {
            super.onResponseContent(request, response, proxyResponse, buffer, offset, length, callback);
            return;
        }
        if (exchange.responseDecoder != null)
        {
            exchange.responseDecoder.input(ByteBuffer.wrap(buffer, offset, length));
            new DecodedContent(exchange.responseDecoder, exchange.responseScan, proxyResponse, callback,
                (output, written) -> writeReleased(request, response, proxyResponse, output, written)).iterate();
            return;
        }
        BodyScan.Step step = exchange.responseScan.feed(ByteBuffer.wrap(buffer, offset, length));
        if (step.blocked() != null)
        {
            callback.failed(step.blocked());
            proxyResponse.abort(step.blocked());
            return;
        }
        writeReleased(request, response, proxyResponse, step.output(), callback);
    }

    private void writeReleased(HttpServletRequest request, HttpServletResponse response, Response proxyResponse, ByteBuffer output, Callback callback)
    {
        if (!output.hasRemaining())
        {
            callback.succeeded();
            return;
        }
        byte[] bytes = new byte[output.remaining()];
        output.get(bytes);
        super.onResponseContent(request, response, proxyResponse, bytes, 0, bytes.length, callback);
    }

    @Override
    protected void onProxyResponseSuccess(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse)
    {
        EgressExchange exchange = EXCHANGE.get(clientRequest);
        if (exchange.responseScan != null)
        {
            if (exchange.responseDecoder != null)
            {
                BodyDecoder decoder = exchange.responseDecoder;
                exchange.responseDecoder = null;
                try
                {
                    decoder.finish();
                }
                catch (GatewayException truncated)
                {
                    exchange.responseScan = null;
                    onProxyResponseFailure(clientRequest, proxyResponse, serverResponse, truncated);
                    return;
                }
            }
            // The bytes held back for a secret that might have been starting go out last.
            BodyScan.Step last = exchange.responseScan.finish();
            exchange.responseScan = null;
            if (last.blocked() != null)
            {
                onProxyResponseFailure(clientRequest, proxyResponse, serverResponse, last.blocked());
                return;
            }
            writeReleased(clientRequest, proxyResponse, serverResponse, last.output(), Callback.from(
                () -> onProxyResponseSuccess(clientRequest, proxyResponse, serverResponse),
                x -> onProxyResponseFailure(clientRequest, proxyResponse, serverResponse, x)));
            return;
        }
        exchange.cancelDeadline();
        exchange.end(egress.agentGate());
        exchange.attempts.record(FailurePolicy.Outcome.OK);
        egress.metrics().latency(exchange.plan.routeName()).record(System.nanoTime() - exchange.start, TimeUnit.NANOSECONDS);
        super.onProxyResponseSuccess(clientRequest, proxyResponse, serverResponse);
    }

    @Override
    protected void onProxyResponseFailure(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, Response serverResponse, Throwable failure)
    {
        EgressExchange exchange = EXCHANGE.get(clientRequest);
        exchange.cancelDeadline();
        // The target's doing, as a node's error is: the agent is told why, the operator too. The
        // message names the encoding or the fault, never anything of the body.
        if (failure instanceof GatewayException refusal && BodyDecoder.ENCODED_RESPONSE.equals(refusal.code()))
            LOG.warn("Egress answer on route {} refused: {}", exchange.plan.routeName(), refusal.getMessage());
        FailurePolicy.Verdict verdict = egress.policy().judge(new FailurePolicy.Attempt(failure, exchange.attempts.isSent(), exchange.attempts.nodeAnswered(),
            proxyResponse.isCommitted(), clientRequest.getMethod(), replayable(exchange, clientRequest), exchange.attempts.count(), exchange.route()));
        exchange.attempts.record(verdict.outcome());
        if (verdict.retry() && exchange.attempts.next())
        {
            exchange.responseScan = null; // held-back bytes of the failed attempt are not part of the next one
            exchange.responseDecoder = null;
            long backoff = egress.policy().backoffMillis(exchange.attempts.count() - 1);
            resetAnswer(proxyResponse);
            retryLater(clientRequest, proxyResponse, backoff);
            return;
        }
        exchange.end(egress.agentGate());
        if (proxyResponse.isCommitted())
        {
            super.onProxyResponseFailure(clientRequest, proxyResponse, serverResponse, failure);
            return;
        }
        try
        {
            resetAnswer(proxyResponse);
            GatewayException error = egress.policy().answer(failure, verdict, exchange.attempts.tried());
            if (error.status() == HttpStatus.INTERNAL_SERVER_ERROR_500)
                LOG.warn("Egress exchange to route {} failed unexpectedly", exchange.plan.routeName(), failure);
            if (exchange.attempts.repinned())
                proxyResponse.setHeader(STICKY, "repinned");
            Errors.write(clientRequest, proxyResponse, error);
        }
        catch (IOException | IllegalStateException x)
        {
            _log.debug("Cannot write error response", x);
        }
        finally
        {
            if (clientRequest.isAsyncStarted())
                clientRequest.getAsyncContext().complete();
        }
    }

    /** Whether the agent's request could be sent again whole: no body, or one held in full. */
    private boolean replayable(EgressExchange exchange, HttpServletRequest request)
    {
        return exchange.body == null ? !hasContent(request) : exchange.body.replayable();
    }

    /** Sends the request again, on the node the exchange has moved to, after the back-off. */
    private void retryLater(HttpServletRequest clientRequest, HttpServletResponse proxyResponse, long delayMillis)
    {
        Runnable resend = () ->
        {
            Request proxyRequest = newProxyRequest(clientRequest, rewriteTarget(clientRequest));
            ReplayableBody body = EXCHANGE.get(clientRequest).body;
            if (body != null)
                proxyRequest.body(body.fresh());
            copyRequestHeaders(clientRequest, proxyRequest);
            addProxyHeaders(clientRequest, proxyRequest);
            sendProxyRequest(clientRequest, proxyResponse, proxyRequest);
        };
        if (delayMillis <= 0)
            resend.run();
        else
            egress.later(delayMillis, resend);
    }

    /**
     * Clears a failed attempt's answer for the next attempt or the error; the headers every answer
     * of the gateway carries on the public listener (a target's page is served under the gateway's
     * origin) are set again, since the reset dropped them with the rest.
     */
    private static void resetAnswer(HttpServletResponse proxyResponse)
    {
        proxyResponse.reset();
        NoScript.set(proxyResponse);
    }
}
