package io.sandgate.config;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What one agent may do beyond what the routes allow: the domains it may reach, whether a refusal
 * is enforced or only reported, and its budgets. The same shape in {@code egress.agents[].policy}
 * and in the body of {@code PUT /admin/egress/agents/{id}/policy}, parsed by {@link #parse} for both.
 *
 * @param domains host names, {@code *.} globs or {@code *}; empty: every domain a route serves
 * @param mode whether a call the policy refuses is refused or only reported
 * @param budgets the agent's budgets; {@link Budgets#NONE} for none
 */
public record AgentPolicy(List<String> domains, Mode mode, Budgets budgets)
{
    /** No restriction beyond the routes, no budget: what an agent without a policy gets. */
    public static final AgentPolicy NONE = new AgentPolicy(List.of(), Mode.ENFORCE, Budgets.NONE);

    static final Set<String> KEYS = Set.of("domains", "mode", "budgets");
    private static final Set<String> BUDGET_KEYS = Set.of(Budgets.REQUESTS_PER_MINUTE, Budgets.REQUEST_BYTES_PER_HOUR, Budgets.RESPONSE_BYTES_PER_HOUR);
    private static final Pattern DOMAIN = Pattern.compile("\\*|(\\*\\.)?[a-z0-9-]{1,63}(\\.[a-z0-9-]{1,63})*");
    private static final int MAX_DOMAINS = 1000;

    /** {@code enforce}: a refused call is answered 403 or 429; {@code report}: it is logged, counted and let through. */
    public enum Mode
    {
        ENFORCE, REPORT
    }

    /**
     * Budgets, each over a window that starts with the first call counted in it; 0 is no budget.
     *
     * @param requestsPerMinute calls (a CONNECT tunnel is one) per minute
     * @param requestBytesPerHour request body bytes sent per hour
     * @param responseBytesPerHour response body bytes received per hour
     */
    public record Budgets(long requestsPerMinute, long requestBytesPerHour, long responseBytesPerHour)
    {
        public static final String REQUESTS_PER_MINUTE = "requests_per_minute";
        public static final String REQUEST_BYTES_PER_HOUR = "request_bytes_per_hour";
        public static final String RESPONSE_BYTES_PER_HOUR = "response_bytes_per_hour";
        public static final Budgets NONE = new Budgets(0, 0, 0);

        public Budgets
        {
            if (requestsPerMinute < 0 || requestBytesPerHour < 0 || responseBytesPerHour < 0)
                throw new IllegalArgumentException("budgets: negative (expected: 0 for none, or a positive number)");
        }

        /** Whether any budget is set: an agent without one costs the store nothing. */
        public boolean any()
        {
            return requestsPerMinute > 0 || bytes();
        }

        /** Whether a bytes budget is set: only then are the agent's bytes counted. */
        public boolean bytes()
        {
            return requestBytesPerHour > 0 || responseBytesPerHour > 0;
        }
    }

    public AgentPolicy
    {
        domains = List.copyOf(domains);
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(budgets, "budgets");
    }

    /** Whether the agent may reach {@code host} (lower case), as a route's {@code match.domains} would match it. */
    public boolean allows(String host)
    {
        return domains.isEmpty() || DomainGlobs.matches(domains, host, true);
    }

    /**
     * Reads a policy from YAML or JSON, every key optional: {@code {domains: [...], mode: enforce | report,
     * budgets: {requests_per_minute, request_bytes_per_hour, response_bytes_per_hour}}}.
     *
     * @param where how messages name the value ({@code egress.agents[0].policy})
     * @throws IllegalArgumentException naming the key and what was expected
     */
    public static AgentPolicy parse(Object raw, String where)
    {
        ConfigTable table = ConfigTable.of(raw, where, "{domains, mode, budgets}", KEYS);
        Object rawDomains = table.raw("domains");
        if (rawDomains != null && !(rawDomains instanceof List<?>))
            throw new IllegalArgumentException(table.at("domains") + ": " + rawDomains + " (expected: a list of host names, *.globs or *)");
        List<String> domains = new ArrayList<>();
        for (Object item : table.items("domains"))
        {
            String domain = String.valueOf(item).toLowerCase(Locale.ROOT);
            if (!(item instanceof String) || domain.length() > 253 || !DOMAIN.matcher(domain).matches())
                throw new IllegalArgumentException(table.at("domains") + ": " + item + " (expected: a host name, a *.glob or *)");
            domains.add(domain);
        }
        if (domains.size() > MAX_DOMAINS)
            throw new IllegalArgumentException(table.at("domains") + ": " + domains.size() + " entries (expected: at most " + MAX_DOMAINS + ")");
        Object rawMode = table.raw("mode");
        Mode mode = Mode.ENFORCE;
        if (rawMode != null)
        {
            mode = switch (rawMode.toString())
            {
                case "enforce" -> Mode.ENFORCE;
                case "report" -> Mode.REPORT;
                default -> throw new IllegalArgumentException(table.at("mode") + ": " + rawMode + " (expected: enforce or report)");
            };
        }
        Budgets budgets = Budgets.NONE;
        if (table.raw("budgets") != null)
        {
            ConfigTable b = table.table("budgets", "{" + String.join(", ", BUDGET_KEYS) + "}", BUDGET_KEYS);
            budgets = new Budgets(count(b, Budgets.REQUESTS_PER_MINUTE), count(b, Budgets.REQUEST_BYTES_PER_HOUR), count(b, Budgets.RESPONSE_BYTES_PER_HOUR));
        }
        return new AgentPolicy(domains, mode, budgets);
    }

    private static long count(ConfigTable table, String key)
    {
        Object raw = table.raw(key);
        if (raw == null)
            return 0;
        // Whole numbers only: YAML and JSON give Integer or Long; 1.5 requests, "10" or true are mistakes.
        if (!(raw instanceof Integer || raw instanceof Long) || ((Number)raw).longValue() < 0)
            throw new IllegalArgumentException(table.at(key) + ": " + raw + " (expected: a whole number, 0 for none)");
        return ((Number)raw).longValue();
    }

    /** The policy in the shape {@link #parse} reads, for the admin API and the store. */
    public Map<String, Object> describe()
    {
        Map<String, Object> budgetsView = new LinkedHashMap<>();
        budgetsView.put(Budgets.REQUESTS_PER_MINUTE, budgets.requestsPerMinute());
        budgetsView.put(Budgets.REQUEST_BYTES_PER_HOUR, budgets.requestBytesPerHour());
        budgetsView.put(Budgets.RESPONSE_BYTES_PER_HOUR, budgets.responseBytesPerHour());
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("domains", domains);
        view.put("mode", mode.name().toLowerCase(Locale.ROOT));
        view.put("budgets", budgetsView);
        return view;
    }
}
