package io.sandgate.egress;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
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
 * The secret-leak scanner as the egress face uses it: the built-in rules plus every secret the
 * gateway holds (real keys and agents' internal tokens, current and overlapping, followed through
 * rotation), one stream per body, and what a hit does on a route. Logs and metrics name the rule
 * and the route, never the match.
 *
 * <p>A held secret never leaves in a request, whatever the route's mode: a real key is refused
 * (redacted on a redacting route), an internal token is refused on every route, since it has no
 * business anywhere but in the header the gateway replaces, which is not read.</p>
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
    /** The held secrets and nothing else: what every request body is read for, as sent and percent-decoded. */
    private volatile LeakScanner held;
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
        credentials.onHeldSecretsChange(() -> update(credentials));
    }

    private void update(Credentials credentials)
    {
        Map<String, Set<String>> secrets = new LinkedHashMap<>();
        secrets.put(LeakScanner.CREDENTIAL_RULE, credentials.heldKeys());
        secrets.put(LeakScanner.AGENT_TOKEN_RULE, credentials.agentTokens());
        LeakScanner next = LeakScanner.defaults().withLiterals(secrets);
        held = LeakScanner.of(List.of()).withLiterals(secrets);
        scanner = next;
        redactor = Redactor.of(next);
        // Built again as injections ask; credentials removed by a reload go.
        injected.clear();
    }

    /** The redaction component with the held secrets, for logs, error bodies and the admin API. */
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
     * hits as the route's scan mode says, and a secret the gateway holds never leaves whatever the
     * mode (see {@link #hitMode}). The line is read as it came and percent-decoded
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
        List<LeakHit> hits = new ArrayList<>(scanner.scan(line));
        hits.addAll(decodedOnly(line, hits));
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
        refuseIfBlocked(byMode, route, "line");
        List<LeakHit> redacted = byMode.getOrDefault(EgressConfig.ScanMode.REDACT, List.of());
        return redacted.isEmpty() ? requestLine : Redactor.redactInUrl(line, redacted);
    }

    /**
     * Checks a tunnel's target ({@code host:port} of a CONNECT) as the authority of a request line:
     * the name goes to name servers and in the tunnel's TLS as it is, so nothing in it can be
     * redacted, and a secret in it is refused (a rule's hit on a route that only reports is counted).
     *
     * @throws GatewayException 422 when a secret must not be sent
     */
    void checkAuthority(EgressConfig.Route route, String authority)
    {
        byte[] bytes = authority.getBytes(StandardCharsets.UTF_8);
        List<LeakHit> hits = new ArrayList<>(scanner.scan(bytes));
        hits.addAll(decodedOnly(bytes, hits));
        Map<EgressConfig.ScanMode, List<LeakHit>> byMode = new EnumMap<>(EgressConfig.ScanMode.class);
        for (LeakHit hit : hits)
            byMode.computeIfAbsent(hitMode(hit, route.scan(), true), mode -> new ArrayList<>()).add(hit);
        refuseIfBlocked(byMode, route, "line");
    }

    /**
     * The hits of the text's percent-decoded form that its hits as sent ({@code rawHits}) do not
     * cover, at their places in the text as sent. A decoded hit that a raw one covers (a secret
     * with no escape in it reads the same both ways) is the same secret, and is counted once.
     */
    private List<LeakHit> decodedOnly(byte[] text, List<LeakHit> rawHits)
    {
        PercentDecoded decoded = PercentDecoded.of(text);
        if (decoded == null)
            return List.of();
        List<LeakHit> hits = new ArrayList<>();
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
     * sent. Rule hits are handled as the route's scan mode says, as in a body; a secret the gateway
     * holds never leaves whatever the mode (see {@link #hitMode}). A name cannot be redacted without
     * changing what the request means, so a secret in one is refused where a value's would be
     * redacted. Values are read as sent and percent-decoded, as a cookie's reader decodes them; a
     * secret seen only decoded cannot be redacted where it stands, and is refused too. Redaction
     * itself is the servlet's, as it copies the headers.
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
                byte[] bytes = value.getBytes(StandardCharsets.UTF_8);
                List<LeakHit> hits = scanner.scan(bytes);
                for (LeakHit hit : hits)
                    byMode.computeIfAbsent(hitMode(hit, route.scan(), false), mode -> new ArrayList<>()).add(hit);
                for (LeakHit hit : decodedOnly(bytes, hits))
                    byMode.computeIfAbsent(hitMode(hit, route.scan(), true), mode -> new ArrayList<>()).add(hit);
            }
        }
        refuseIfBlocked(byMode, route, "header");
    }

    /**
     * What a hit in a request does: the mode of the route (of a body's stage), but a held key is
     * never sent (refused, or redacted on a redacting route), an internal token is refused on every
     * route, and a secret where it cannot be redacted (a header's name, the target's authority, a
     * match seen only percent-decoded) is refused rather than redacted.
     */
    private static EgressConfig.ScanMode hitMode(LeakHit hit, EgressConfig.ScanMode routeMode, boolean unredactable)
    {
        if (hit.ruleId().equals(LeakScanner.AGENT_TOKEN_RULE))
            return EgressConfig.ScanMode.BLOCK;
        boolean held = hit.ruleId().equals(LeakScanner.CREDENTIAL_RULE);
        EgressConfig.ScanMode mode = held && routeMode != EgressConfig.ScanMode.REDACT ? EgressConfig.ScanMode.BLOCK : routeMode;
        return unredactable && mode == EgressConfig.ScanMode.REDACT ? EgressConfig.ScanMode.BLOCK : mode;
    }

    /**
     * Counts and logs the hits of one stage of a request body, each as {@link #hitMode} says.
     *
     * @param stageMode the mode the stage reads the body in: the route's, or {@code BLOCK} for the
     *        held secrets' own stage
     * @return the error the exchange ends with (422) when any hit blocks, else null
     */
    GatewayException onRequestBodyHits(List<LeakHit> hits, EgressConfig.Route route, EgressConfig.ScanMode stageMode)
    {
        if (hits.isEmpty())
            return null;
        Map<EgressConfig.ScanMode, List<LeakHit>> byMode = new EnumMap<>(EgressConfig.ScanMode.class);
        for (LeakHit hit : hits)
            byMode.computeIfAbsent(hitMode(hit, stageMode, false), mode -> new ArrayList<>()).add(hit);
        return onHits(byMode, route, "body");
    }

    private void refuseIfBlocked(Map<EgressConfig.ScanMode, List<LeakHit>> byMode, EgressConfig.Route route, String part)
    {
        GatewayException blocked = onHits(byMode, route, part);
        if (blocked != null)
            throw blocked;
    }

    /**
     * Counts and logs a request's hits by what they do: blocked ones refuse it, before the
     * redacted and reported ones are counted; hits on a route that does not scan count nowhere.
     *
     * @return the error (422) when any hit blocks, else null
     */
    private GatewayException onHits(Map<EgressConfig.ScanMode, List<LeakHit>> byMode, EgressConfig.Route route, String part)
    {
        GatewayException blocked = onHits(byMode.getOrDefault(EgressConfig.ScanMode.BLOCK, List.of()), route, EgressConfig.ScanMode.BLOCK, "request", part);
        if (blocked != null)
            return blocked;
        onHits(byMode.getOrDefault(EgressConfig.ScanMode.REDACT, List.of()), route, EgressConfig.ScanMode.REDACT, "request", part);
        onHits(byMode.getOrDefault(EgressConfig.ScanMode.REPORT, List.of()), route, EgressConfig.ScanMode.REPORT, "request", part);
        return null;
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
     * A stream that reads a request body for the held secrets alone, as sent and percent-decoded
     * (a form, a cookie jar), whatever the route's mode; null when the gateway holds none.
     */
    LeakScanner.Stream openHeld()
    {
        LeakScanner secrets = held;
        return secrets.literalCount() == 0 ? null : secrets.decodedStream();
    }

    /**
     * A stream that redacts the injection's keys, and nothing else: what a target repeats of the
     * request it got (an echo, an error page quoting the query) must not hand the agent the key
     * that replaced its token. Null when no key is long enough to be looked for
     * ({@link LeakScanner#MIN_LITERAL_LENGTH}).
     */
    LeakScanner.Stream openInjected(Credentials.Injection injection)
    {
        return openKeys(injection.credential(), injection.keys());
    }

    /** As {@link #openInjected}, for the keys of one credential however they went in (a route's credential, a placeholder). */
    LeakScanner.Stream openKeys(String credential, Set<String> credentialKeys)
    {
        KeyScanner keys = injected.get(credential);
        if (keys == null || !keys.keys().equals(credentialKeys))
        {
            keys = new KeyScanner(credentialKeys, LeakScanner.of(List.of()).withLiterals(credentialKeys));
            injected.put(credential, keys);
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
        if (direction.equals("request") && rule.equals(LeakScanner.AGENT_TOKEN_RULE))
            return new GatewayException(HttpStatus.UNPROCESSABLE_ENTITY_422, SECRET_DETECTED, "the request holds an agent's internal token (rule " + rule
                + "), which goes only in the header a route's credential replaces; it was not sent");
        // The agent's request is the agent's doing (422); a target answering with a secret is the target's (502).
        return direction.equals("request")
            ? new GatewayException(HttpStatus.UNPROCESSABLE_ENTITY_422, SECRET_DETECTED, "the request holds a secret (rule " + rule + "); it was not sent")
            : new GatewayException(HttpStatus.BAD_GATEWAY_502, SECRET_IN_RESPONSE, "the target's answer holds a secret (rule " + rule + "); it was cut off");
    }
}
