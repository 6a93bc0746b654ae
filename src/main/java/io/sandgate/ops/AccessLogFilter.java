package io.sandgate.ops;

import java.io.IOException;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReferenceArray;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.LongStream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.Tracer;
import io.sandgate.core.LogText;
import io.sandgate.leak.Redactor;
import io.sandgate.tracing.Spans;
import io.sandgate.tracing.TraceAttributes;
import io.sandgate.tracing.TraceHeaders;
import io.sandgate.tracing.Tracing;
import io.sandgate.web.AccessLog;
import io.sandgate.web.AccessNote;
import io.sandgate.web.Exchanges;
import io.sandgate.web.LogContext;
import io.sandgate.web.ServerSpan;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.http.HttpStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;
import org.slf4j.spi.LoggingEventBuilder;

/**
 * Counts every request by face and status, times it by face (and an ingress exchange's sandbox leg
 * apart), and writes one access-log line per request to the {@code sandgate.access} logger. The
 * line has the path but never the query (it may carry a grant token), and never a cookie or
 * Authorization header; anything in the path that looks like a secret (a Slack webhook, a key
 * pasted into a URL) is written as {@code [REDACTED]}.
 * <p>
 * It wraps every request, so it also frames the request's {@link LogContext}: the trace id of a
 * {@code traceparent} header going in, every field cleared coming out. With tracing on it starts
 * and ends the request's server span ({@link ServerSpan}) too, and the log's trace id is the span's.
 */
public final class AccessLogFilter extends HttpFilter implements AccessLog
{
    private static final Logger ACCESS = LoggerFactory.getLogger("sandgate.access");
    /** The most of a path, and of a query, logged: a hostile one must not flood the log. */
    private static final int MAX_LOGGED_PART = 512;
    /**
     * Histogram buckets of the request and sandbox times in microseconds, so that an operator can
     * read a p99 from {@code /metrics}: from a tenth of a millisecond, where a proxy's own share of a
     * loopback or LAN exchange lies, to ten seconds.
     */
    private static final Duration[] BUCKETS = LongStream.of(100, 250, 500, 1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000,
        500_000, 1_000_000, 2_500_000, 5_000_000, 10_000_000).mapToObj(micros -> Duration.of(micros, ChronoUnit.MICROS)).toArray(Duration[]::new);

    private final MeterRegistry registry;
    private final boolean log;
    private final Supplier<Redactor> redactor;
    /** Null when tracing is off. */
    private final Tracer tracer;
    /**
     * Looked up once per face and status: building the meter id on every request costs more than the
     * count. By face (a constant), then by status (three digits) as an index, with no key to build.
     */
    private final Map<String, AtomicReferenceArray<Counter>> counters = new ConcurrentHashMap<>();
    /** Request time by face only: a series per status as well would multiply them for little. */
    private final Map<String, Timer> timers = new ConcurrentHashMap<>();
    /** The sandboxes' own time on the ingress face, from a request handed to them to their answer's head. */
    private final Timer sandboxTime;

    /**
     * @param redactor the redaction in force (it learns the gateway's real keys once the egress
     *        face has read them, and follows their rotation)
     * @param tracing where the requests' server spans go
     */
    public AccessLogFilter(MeterRegistry registry, boolean log, Supplier<Redactor> redactor, Tracing tracing)
    {
        this.registry = registry;
        this.log = log;
        this.redactor = redactor;
        this.tracer = tracing.tracer();
        // Registered now, so that its series exist (at zero) before the first exchange: dashboards and alerts can name it.
        this.sandboxTime = Timer.builder("sandgate.ingress.sandbox.duration").serviceLevelObjectives(BUCKETS)
            .description("Time from an ingress request handed to the sandbox's connection (a new connection's opening included) to the sandbox's answer's head")
            .register(registry);
    }

    @Override
    protected void doFilter(HttpServletRequest request, HttpServletResponse response, FilterChain chain) throws IOException, ServletException
    {
        if (request.getDispatcherType() == DispatcherType.ASYNC)
        {
            // A face resumed after a wait (egress after a name lookup): its fields leave with it,
            // and the line was already promised by the first dispatch.
            try
            {
                chain.doFilter(request, response);
            }
            finally
            {
                LogContext.clear();
            }
            return;
        }
        long start = System.nanoTime();
        Span span = tracer == null ? null : Spans.server(tracer, request.getMethod(), request::getHeader);
        if (span == null)
        {
            LogContext.trace(request.getHeader(TraceHeaders.TRACEPARENT));
        }
        else
        {
            ServerSpan.set(request, span);
            LogContext.trace(span);
        }
        boolean escaped = true;
        try
        {
            chain.doFilter(request, response);
            escaped = false;
        }
        finally
        {
            // An exception that leaves the chain becomes the container's error page after this
            // filter has returned: the response still says 200 here, the client will see a 500.
            boolean failed = escaped && !response.isCommitted();
            // The line may be written later on another thread: it takes the request's fields along.
            Map<String, String> context = log ? MDC.getCopyOfContextMap() : null;
            LogContext.clear();
            Exchanges.whenDone(request, () ->
            {
                int status = failed ? HttpStatus.INTERNAL_SERVER_ERROR_500 : response.getStatus();
                try
                {
                    record(request, response, status, start, context);
                }
                finally
                {
                    if (span != null)
                        endSpan(span, request, status);
                }
            });
        }
    }

    private void record(HttpServletRequest request, HttpServletResponse response, int status, long start, Map<String, String> context)
    {
        String contentType = response.getContentType();
        boolean timed = contentType == null || !contentType.startsWith("text/event-stream");
        if (!writesLines())
        {
            // No line: no context to lend the thread, no path to print.
            count(status, start, AccessNote.of(request), timed);
            return;
        }
        // The line may be written on another thread than the request's: it gets the request's context.
        Map<String, String> thread = MDC.getCopyOfContextMap();
        MDC.setContextMap(context == null ? Map.of() : context);
        try
        {
            record(request.getRemoteAddr(), request.getMethod(), path(request), request.getQueryString(), status, start, AccessNote.of(request), timed);
        }
        finally
        {
            MDC.setContextMap(thread == null ? Map.of() : thread);
        }
    }

    /** The request's path in the gateway's context, without the query (it may carry a grant). */
    private static String path(HttpServletRequest request)
    {
        return request.getRequestURI().substring(request.getContextPath().length());
    }

    /** The span says what the access line says, and no more: the face, and the path as the log writes it. */
    private void endSpan(Span span, HttpServletRequest request, int status)
    {
        span.setAttribute(TraceAttributes.FACE, AccessNote.of(request).face().label());
        span.setAttribute(TraceAttributes.URL_PATH, printable(path(request)));
        Spans.endServer(span, status);
    }

    @Override
    public boolean writesLines()
    {
        return log && ACCESS.isInfoEnabled();
    }

    @Override
    public void record(String remoteAddr, String method, String path, String query, int status, long startNanos, AccessNote note)
    {
        record(remoteAddr, method, path, query, status, startNanos, note, true);
    }

    /**
     * @param timed whether the request's time says how fast it was served: not for an event stream,
     *        whose time is its whole life (minutes of an MCP SSE stream would swamp the mean); an
     *        upgrade (101) never is, its tunnel lives on after the request
     */
    private void record(String remoteAddr, String method, String path, String query, int status, long startNanos, AccessNote note, boolean timed)
    {
        long nanos = count(status, startNanos, note, timed);
        if (!writesLines())
            return;
        String face = note.face().label();
        long micros = nanos / 1000;
        // A query may carry a grant or an API key: those parameters' values never reach the log.
        String logged = query == null || query.isEmpty() ? printable(path) : printable(path) + LogText.printable("?" + redactor.get().query(query), MAX_LOGGED_PART);
        String subject = note.subject() == null ? "-" : note.subject();
        String via = note.via() == null ? "-" : note.via();
        long upstreamMicros = note.upstreamNanos() < 0 ? -1 : note.upstreamNanos() / 1000;
        String upstream = upstreamMicros < 0 ? "-" : upstreamMicros + "us";
        // The same fields twice: in the message for the text format, as key-value pairs for the
        // JSON one (the text pattern does not print them, so its lines stay as they were).
        LoggingEventBuilder line = ACCESS.atInfo().addKeyValue("client", remoteAddr).addKeyValue("method", method).addKeyValue("path", logged)
            .addKeyValue("status", status).addKeyValue("durationMicros", micros).addKeyValue("face", face).addKeyValue("sandbox", subject)
            .addKeyValue("via", via);
        if (upstreamMicros >= 0)
            line = line.addKeyValue("upstreamMicros", upstreamMicros);
        line.log("{} {} {} {} {}us face={} sandbox={} via={} upstream={}", remoteAddr, method, logged, status, micros, face, subject, via, upstream);
    }

    /** Counts the request by face and status and times it (see {@link #record}); returns how long it took. */
    private long count(int status, long startNanos, AccessNote note, boolean timed)
    {
        String face = note.face().label();
        AtomicReferenceArray<Counter> byStatus = counters.computeIfAbsent(face, key -> new AtomicReferenceArray<>(1000));
        Counter counter = status >= 0 && status < 1000 ? byStatus.get(status) : null;
        if (counter == null)
        {
            // The registry hands out one counter per id, so a race here registers nothing twice.
            counter = registry.counter("sandgate.requests", "face", face, "status", Integer.toString(status));
            if (status >= 0 && status < 1000)
                byStatus.set(status, counter);
        }
        counter.increment();
        long nanos = System.nanoTime() - startNanos;
        if (timed && status != HttpStatus.SWITCHING_PROTOCOLS_101)
        {
            // The sandbox's part first: whoever sees the exchange counted sees its part too.
            if (note.upstreamNanos() >= 0)
                sandboxTime.record(note.upstreamNanos(), TimeUnit.NANOSECONDS);
            // Looked up first: the registering lambda captures this filter, so passing it would allocate one per request.
            Timer timer = timers.get(face);
            if (timer == null)
                timer = timers.computeIfAbsent(face, key -> Timer.builder("sandgate.request.duration").tag("face", key).serviceLevelObjectives(BUCKETS)
                    .description("Time from a request's arrival to its last byte, by face; event streams and upgrades not included").register(registry));
            timer.record(nanos, TimeUnit.NANOSECONDS);
        }
        return nanos;
    }

    /** The path redacted, and kept from forging log lines. */
    @Override
    public String printable(String path)
    {
        return LogText.printable(redactor.get().url(path), MAX_LOGGED_PART);
    }
}
