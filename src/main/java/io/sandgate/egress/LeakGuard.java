package io.sandgate.egress;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.EgressConfig;
import io.sandgate.core.Audit;
import io.sandgate.leak.LeakHit;
import io.sandgate.leak.LeakScanner;
import io.sandgate.leak.PercentDecoded;
import io.sandgate.leak.Redactor;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The secret-leak scanner as the egress face uses it: the built-in rules plus every real key the
 * gateway holds (current and overlapping, followed through rotation), one stream per body, and
 * what a hit does on a route. Logs and metrics name the rule and the route, never the match.
 */
public final class LeakGuard
{
    private static final Logger LOG = LoggerFactory.getLogger(LeakGuard.class);
    /** The error code of a request refused for holding a secret. */
    static final String SECRET_DETECTED = "secret_detected";
    /** The error code of an answer cut off for holding a secret. */
    static final String SECRET_IN_RESPONSE = "secret_in_response";

    private final MeterRegistry registry;
    private volatile LeakScanner scanner;
    private volatile Redactor redactor;
    /** Per credential: a scanner of its keys alone, built again when they rotate. */
    private final Map<String, KeyScanner> injected = new ConcurrentHashMap<>();

    /** A scanner that looks for {@code keys} and nothing else. */
    private record KeyScanner(Set<String> keys, LeakScanner scanner)
    {
        @Override
        public String toString()
        {
            return "KeyScanner[" + keys.size() + " keys]";
        }
    }

    public LeakGuard(Credentials credentials, MeterRegistry registry)
    {
        this.registry = registry;
        update(credentials);
        credentials.onHeldKeysChange(() -> update(credentials));
    }

    private void update(Credentials credentials)
    {
        LeakScanner next = LeakScanner.defaults().withLiterals(credentials.heldKeys());
        scanner = next;
        redactor = Redactor.of(next);
        // Built again as injections ask; credentials removed by a reload go.
        injected.clear();
    }

    /** The redaction component with the held keys, for logs, error bodies and the admin API. */
    public Redactor redactor()
    {
        return redactor;
    }

    /**
     * Refuses, on a route that scans, a request body the scanner cannot read: a compressed body
     * would hide a key from it.
     *
     * @param contentEncodings every {@code Content-Encoding} value of the request
     * @throws GatewayException 415 for an encoded body
     */
    static void refuseEncodedBody(List<String> contentEncodings)
    {
        for (String contentEncoding : contentEncodings)
        {
            if (!contentEncoding.equalsIgnoreCase("identity"))
                throw new GatewayException(HttpStatus.UNSUPPORTED_MEDIA_TYPE_415, "encoded_body", "request bodies with Content-Encoding " + contentEncoding
                    + " cannot be scanned for secrets; send them uncompressed");
        }
    }

    /**
     * Checks the path and query before anything is sent, on every route, as the headers are: rule
     * hits as the route's scan mode says, and a key the gateway holds never leaves whatever the mode
     * (refused, or redacted on a redacting route). The line is read as it came and percent-decoded
     * ({@link PercentDecoded}): the target decodes it, so {@code sk%2Dproj...} or a key escaped byte
     * by byte is the key to it. A match is redacted where it stands in the line as sent, as
     * {@link Redactor#REDACTED_IN_URL}, widened to whole percent-escapes so that what is sent stays a
     * well-formed URL. One in the target's authority, or across the {@code ?}, cannot be redacted
     * without changing where the request goes or what it asks, and is refused.
     *
     * @param requestLine the target's authority, path and query as the agent sent them
     *        ({@code host:port/path?query}, percent-encoded)
     * @return the request line to send: as it came, or with its matches redacted
     * @throws GatewayException 422 when a secret must not be sent
     */
    String checkRequestLine(EgressConfig.Route route, String requestLine)
    {
        byte[] line = requestLine.getBytes(StandardCharsets.UTF_8);
        List<LeakHit> hits = withDecoded(line, scanner.scan(line));
        if (hits.isEmpty())
            return requestLine;
        // The request's path holds no raw '?': the first one starts the query.
        int queryMark = requestLine.indexOf('?');
        int slash = requestLine.indexOf('/');
        int authorityEnd = slash >= 0 && (queryMark < 0 || slash < queryMark) ? slash : queryMark >= 0 ? queryMark : line.length;
        Map<EgressConfig.ScanMode, List<LeakHit>> byMode = new EnumMap<>(EgressConfig.ScanMode.class);
        for (LeakHit hit : hits)
        {
            boolean unredactable = hit.start() < authorityEnd || queryMark >= 0 && hit.start() < queryMark && hit.end() > queryMark;
            byMode.computeIfAbsent(hitMode(hit, route.scan(), unredactable), mode -> new ArrayList<>()).add(hit);
        }
        onHits(byMode, route, "line");
        List<LeakHit> redacted = byMode.getOrDefault(EgressConfig.ScanMode.REDACT, List.of());
        return redacted.isEmpty() ? requestLine : Redactor.redactInUrl(line, redacted);
    }

    /**
     * The hits of the raw line and those of its percent-decoded form, at their places in the raw
     * line. A decoded hit that one of the raw line's already covers (a secret with no escape in it
     * reads the same both ways) is the same secret, and is counted once.
     */
    private List<LeakHit> withDecoded(byte[] line, List<LeakHit> rawHits)
    {
        PercentDecoded decoded = PercentDecoded.of(line);
        if (decoded == null)
            return rawHits;
        List<LeakHit> hits = new ArrayList<>(rawHits);
        for (LeakHit hit : scanner.scan(decoded.bytes()))
        {
            LeakHit inLine = decoded.inRaw(hit);
            if (rawHits.stream().noneMatch(raw -> raw.ruleId().equals(inLine.ruleId()) && raw.start() < inLine.end() && inLine.start() < raw.end()))
                hits.add(inLine);
        }
        return hits;
    }

    /**
     * Checks the agent's headers that reach the target, names and every value, before anything is
     * sent. Rule hits are handled as the route's scan mode says, as in a body; a key the gateway
     * holds never leaves whatever the mode (refused, or redacted on a redacting route). A name
     * cannot be redacted without changing what the request means, so a secret in one is refused
     * where a value's would be redacted. Redaction itself is the servlet's, as it copies the headers.
     *
     * @param forwarded whether the header of that name reaches the target (headers the gateway
     *        consumes or replaces do not, so a secret in them leaks nowhere)
     * @throws GatewayException 422 when a secret must not be sent
     */
    void checkHeaders(EgressConfig.Route route, RequestHeaders headers, Predicate<String> forwarded)
    {
        Map<EgressConfig.ScanMode, List<LeakHit>> byMode = new EnumMap<>(EgressConfig.ScanMode.class);
        for (String name : headers.names())
        {
            if (!forwarded.test(name))
                continue;
            for (LeakHit hit : scanner.scan(name.getBytes(StandardCharsets.UTF_8)))
                byMode.computeIfAbsent(hitMode(hit, route.scan(), true), mode -> new ArrayList<>()).add(hit);
            for (String value : headers.values(name))
            {
                for (LeakHit hit : scanner.scan(value.getBytes(StandardCharsets.UTF_8)))
                    byMode.computeIfAbsent(hitMode(hit, route.scan(), false), mode -> new ArrayList<>()).add(hit);
            }
        }
        onHits(byMode, route, "header");
    }

    /**
     * What a hit in a header or the request line does: the route's mode, but a held key is never
     * sent, nor a secret where it cannot be redacted (a header's name, the target's authority).
     */
    private static EgressConfig.ScanMode hitMode(LeakHit hit, EgressConfig.ScanMode routeMode, boolean unredactable)
    {
        boolean held = hit.ruleId().equals(LeakScanner.CREDENTIAL_RULE);
        EgressConfig.ScanMode mode = held && routeMode != EgressConfig.ScanMode.REDACT ? EgressConfig.ScanMode.BLOCK : routeMode;
        return unredactable && mode == EgressConfig.ScanMode.REDACT ? EgressConfig.ScanMode.BLOCK : mode;
    }

    /**
     * Counts and logs a request's hits by what they do: blocked ones refuse it, before the
     * redacted and reported ones are counted; hits on a route that does not scan count nowhere.
     *
     * @throws GatewayException 422 when any hit blocks
     */
    private void onHits(Map<EgressConfig.ScanMode, List<LeakHit>> byMode, EgressConfig.Route route, String part)
    {
        GatewayException blocked = onHits(byMode.getOrDefault(EgressConfig.ScanMode.BLOCK, List.of()), route, EgressConfig.ScanMode.BLOCK, "request", part);
        if (blocked != null)
            throw blocked;
        onHits(byMode.getOrDefault(EgressConfig.ScanMode.REDACT, List.of()), route, EgressConfig.ScanMode.REDACT, "request", part);
        onHits(byMode.getOrDefault(EgressConfig.ScanMode.REPORT, List.of()), route, EgressConfig.ScanMode.REPORT, "request", part);
    }

    /**
     * A stream for one body, or null when the route does not scan. Blocking routes hold back the
     * bytes a secret could still be starting with, like redacting ones: a key split across two
     * chunks must not have its first half sent before the second half shows what it is.
     */
    LeakScanner.Stream open(EgressConfig.ScanMode mode)
    {
        return switch (mode)
        {
            case OFF -> null;
            case REPORT -> scanner.stream(LeakScanner.Mode.REPORT);
            case BLOCK, REDACT -> scanner.stream(LeakScanner.Mode.REDACT);
        };
    }

    /**
     * A stream that redacts the injection's keys, and nothing else: what a target repeats of the
     * request it got (an echo, an error page quoting the query) must not hand the agent the key
     * that replaced its token. Null when no key is long enough to be looked for
     * ({@link LeakScanner#MIN_LITERAL_LENGTH}).
     */
    LeakScanner.Stream openInjected(Credentials.Injection injection)
    {
        KeyScanner keys = injected.get(injection.credential());
        if (keys == null || !keys.keys().equals(injection.keys()))
        {
            keys = new KeyScanner(injection.keys(), LeakScanner.of(List.of()).withLiterals(injection.keys()));
            injected.put(injection.credential(), keys);
        }
        return keys.scanner().literalCount() == 0 ? null : keys.scanner().stream(LeakScanner.Mode.REDACT);
    }

    /**
     * Counts and logs the hits; on a blocking route returns the error the exchange ends with
     * (422), else null.
     *
     * @param part where in the message the hits are ({@code body}, {@code header}, {@code line}), for the log
     */
    GatewayException onHits(List<LeakHit> hits, EgressConfig.Route route, EgressConfig.ScanMode mode, String direction, String part)
    {
        if (hits.isEmpty())
            return null;
        String routeName = route.domains().get(0);
        for (LeakHit hit : hits)
        {
            Counter.builder("sandgate.egress.leaks").description("Secrets found in egress traffic, by rule")
                .tags("rule", hit.ruleId(), "route", routeName, "direction", direction, "mode", mode.name().toLowerCase(Locale.ROOT))
                .register(registry).increment();
        }
        String rule = hits.get(0).ruleId();
        LOG.warn("Secret-leak rule {} matched a {} {} on route {} ({} match(es)): {}", rule, direction, part, routeName, hits.size(),
            mode == EgressConfig.ScanMode.BLOCK ? "blocked" : mode == EgressConfig.ScanMode.REDACT ? "redacted" : "reported");
        if (mode != EgressConfig.ScanMode.BLOCK)
            return null;
        Audit.leakBlocked(routeName, rule, direction);
        // The agent's request is the agent's doing (422); a target answering with a secret is the target's (502).
        return direction.equals("request")
            ? new GatewayException(HttpStatus.UNPROCESSABLE_ENTITY_422, SECRET_DETECTED, "the request holds a secret (rule " + rule + "); it was not sent")
            : new GatewayException(HttpStatus.BAD_GATEWAY_502, SECRET_IN_RESPONSE, "the target's answer holds a secret (rule " + rule + "); it was cut off");
    }
}
