package io.sandgate.egress;

import io.sandgate.core.Secret;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.EgressConfig;
import io.sandgate.leak.LeakHit;
import io.sandgate.leak.LeakScanner;
import io.sandgate.leak.Redactor;
import io.sandgate.web.GatewayException;
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

    private final MeterRegistry registry;
    private volatile LeakScanner scanner;
    private volatile Redactor redactor;

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
    }

    /** The redaction component with the held keys, for logs, error bodies and the admin API. */
    public Redactor redactor()
    {
        return redactor;
    }

    /** Hits in a text known whole, such as a request line. */
    List<LeakHit> scan(String text)
    {
        return scanner.scan(text.getBytes(StandardCharsets.UTF_8));
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
     * Counts and logs the hits; on a blocking route returns the error the exchange ends with
     * (422), else null.
     */
    GatewayException onHits(List<LeakHit> hits, EgressConfig.Route route, EgressConfig.ScanMode mode, String direction)
    {
        if (hits.isEmpty())
            return null;
        String routeName = route.domains().get(0);
        for (LeakHit hit : hits)
        {
            Counter.builder("sandgate.egress.leaks").description("Secrets found in egress bodies, by rule")
                .tags("rule", hit.ruleId(), "route", routeName, "direction", direction, "mode", mode.name().toLowerCase(Locale.ROOT))
                .register(registry).increment();
        }
        String rule = hits.get(0).ruleId();
        LOG.warn("Secret-leak rule {} matched a {} body on route {} ({} match(es)): {}", rule, direction, routeName, hits.size(),
            mode == EgressConfig.ScanMode.BLOCK ? "blocked" : mode == EgressConfig.ScanMode.REDACT ? "redacted" : "reported");
        if (mode != EgressConfig.ScanMode.BLOCK)
            return null;
        // The agent's request is the agent's doing (422); a target answering with a secret is the target's (502).
        return direction.equals("request")
            ? new GatewayException(422, "secret_detected", "the request holds a secret (rule " + rule + "); it was not sent")
            : new GatewayException(502, "secret_in_response", "the target's answer holds a secret (rule " + rule + "); it was cut off");
    }
}
