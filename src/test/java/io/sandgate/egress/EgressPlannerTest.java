package io.sandgate.egress;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.EgressConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.core.Secret;
import io.sandgate.net.SsrfGuard;
import io.sandgate.secrets.SecretRing;
import io.sandgate.secrets.SecretSource;
import io.sandgate.secrets.SecretUnavailableException;
import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpFields;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The routing decision without a server: every entry planned from names, headers and a resolver answering from a map. */
class EgressPlannerTest
{
    // Built at run time so the repository holds nothing a secret scanner would flag.
    private static final String REAL_KEY = "sk-" + "proj-" + "Q1w2E3r4T5y6U7i8O9p0".repeat(2);
    private static final String TOKEN = "sgt_agent_alpha_0123456789";
    private static final String PUBLIC = "93.184.216.34";

    private final Map<String, String> dns = new HashMap<>(Map.of("api.example.com", PUBLIC, "llm.example.com", PUBLIC,
        "internal.example.com", "10.0.0.5", "sticky.example.com", PUBLIC));
    private final List<String> resolved = new ArrayList<>();
    private final List<String> resolvedOn = new ArrayList<>();
    private Schedulers schedulers;
    private Credentials credentials;
    private DnsLookups lookups;
    private EgressPlanner planner;

    @BeforeEach
    void start()
    {
        EgressConfig config = ConfigLoader.fromValues(Map.of(
            "egress.connect-timeout", "2s",
            "egress.connect-ports", "443,8443",
            "egress.routes", List.of(
                Map.of("match", Map.of("domains", List.of("llm.example.com")), "upstream", "main", "credential", "openai"),
                Map.of("match", Map.of("domains", List.of("sticky.example.com")), "upstream", "main", "sticky_session", true, "sticky_ttl", "7m"),
                Map.of("match", Map.of("domains", List.of("*.example.com", "169.254.169.254"), "task_type", "web"), "upstream", "main",
                    "timeout", "9s", "idle_timeout", "4s", "scan", "off"),
                Map.of("match", Map.of("domains", List.of("*.example.com"), "task_type", "redact"), "upstream", "main", "scan", "redact"),
                Map.of("match", Map.of("domains", List.of("*.example.com")), "upstream", "main")),
            "egress.pools", Map.of("main", Map.of("region", "eu", "nodes", List.of(Map.of("id", "n1", "address", "192.0.2.1:3128")))),
            "egress.credentials", Map.of("openai", Map.of("secret", "openai", "hosts", List.of("llm.example.com"))),
            "egress.agents", List.of(Map.of("id", "alpha", "token", "alpha-token", "credentials", List.of("openai"))))).egress();

        Map<String, String> secrets = Map.of("openai", REAL_KEY, "alpha-token", TOKEN);
        SecretSource source = new SecretSource()
        {
            @Override
            public Secret get(String name)
            {
                if (!secrets.containsKey(name))
                    throw new SecretUnavailableException(SecretUnavailableException.Reason.UNKNOWN, "no secret " + name);
                return new Secret(secrets.get(name));
            }

            @Override
            public String kind()
            {
                return "test";
            }
        };
        schedulers = Schedulers.create();
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        credentials = new Credentials(config.credentials(), new SecretRing(source, Duration.ofMinutes(1), Clock.systemUTC()), Clock.systemUTC(),
            registry, schedulers);
        SsrfGuard guard = new SsrfGuard(config.ssrfAllow(), host ->
        {
            resolved.add(host);
            resolvedOn.add(Thread.currentThread().getName());
            String address = dns.get(host);
            if (address == null)
                throw new UnknownHostException(host);
            return List.of(InetAddress.getByName(address));
        });
        lookups = new DnsLookups(config.dnsMaxInFlight(), config.dnsTimeout(), schedulers.timer());
        agents = new AgentGate(new AgentPolicies(config.credentials(), AgentPolicyStore.inMemory(), schedulers), AgentBudgets.inMemory(Clock.systemUTC()),
            registry, schedulers);
        planner = new EgressPlanner(new RouteTable(config.routes()), guard, lookups, credentials,
            new LeakGuard(credentials, registry), agents, config.connectTimeout(), config.connectPorts());
    }

    private AgentGate agents;

    @AfterEach
    void stop()
    {
        lookups.close();
        agents.close();
        credentials.close();
        schedulers.close();
    }

    private static RequestHeaders headers(String... namesAndValues)
    {
        HttpFields.Mutable headers = HttpFields.build();
        for (int i = 0; i < namesAndValues.length; i += 2)
            headers.add(namesAndValues[i], namesAndValues[i + 1]);
        return RequestHeaders.of(headers);
    }

    private EgressPlan baseUrl(String path, String query, String... headers)
    {
        return planned(planner.plan(EgressPlan.Entry.BASE_URL, path, query, headers(headers), Optional.empty()));
    }

    private EgressPlan forwardProxy(String path, String query, RequestHeaders headers)
    {
        return planned(planner.plan(EgressPlan.Entry.FORWARD_PROXY, path, query, headers, Optional.empty()));
    }

    private EgressPlan tunnel(String host, int port, RequestHeaders headers)
    {
        return planned(planner.planTunnel(host, port, headers));
    }

    /** The plan, or what refused it, whether before or after its target was resolved. */
    private static EgressPlan planned(CompletableFuture<EgressPlan> plan)
    {
        try
        {
            return plan.join();
        }
        catch (CompletionException x)
        {
            throw (RuntimeException)x.getCause();
        }
    }

    private static GatewayException refused(Runnable call)
    {
        return assertThrows(GatewayException.class, call::run);
    }

    @Test
    void plan_baseUrl_pinsTheCheckedAddress_andKeepsPathAndQuery() throws Exception
    {
        EgressPlan plan = baseUrl("API.example.com/v1/models", "limit=5");
        assertEquals(EgressPlan.Entry.BASE_URL, plan.entry());
        assertEquals(List.of("*.example.com"), plan.route().domains());
        assertEquals(new PinnedTarget("https", "api.example.com", InetAddress.getByName(PUBLIC), 443), plan.target());
        assertEquals("/v1/models?limit=5", plan.pathAndQuery());
        assertEquals("https://" + PUBLIC + ":443/v1/models?limit=5", plan.uri());
        assertTrue(plan.injection().isEmpty());
    }

    @Test
    void plan_sameForBaseUrlAndConnect()
    {
        EgressPlan viaPath = baseUrl("sticky.example.com:8443/x", null, EgressPlanner.SESSION, "agent-7");
        EgressPlan viaConnect = tunnel("sticky.example.com", 8443, headers(EgressPlanner.SESSION, "agent-7"));
        assertEquals(EgressPlan.Entry.CONNECT, viaConnect.entry());
        assertEquals(viaPath.route(), viaConnect.route());
        assertEquals(viaPath.target(), viaConnect.target());
        assertEquals(viaPath.sticky(), viaConnect.sticky());
        assertEquals(viaPath.timeouts(), viaConnect.timeouts());
        assertEquals("", viaConnect.pathAndQuery(), "a tunnel's requests are never seen");
    }

    @Test
    void plan_tunnelToAPortNotListed_isForbidden_namingTheKey_beforeResolving()
    {
        GatewayException smtp = refused(() -> tunnel("api.example.com", 25, headers()));
        assertEquals(403, smtp.status());
        assertTrue(smtp.getMessage().contains("egress.connect-ports"), smtp.getMessage());
        // An https target in base-URL mode is tunnelled too, so the same ports apply.
        assertEquals(403, refused(() -> baseUrl("api.example.com:8444/x", null)).status());
        assertTrue(resolved.isEmpty(), "resolved " + resolved);
        assertEquals(8443, tunnel("api.example.com", 8443, headers()).target().port());
        // Plain http is not tunnelled: its port is the route's business.
        assertEquals(8080, forwardProxy("api.example.com:8080/x", null, headers()).target().port());
    }

    @Test
    void plan_nameIsResolvedOnALookupThread_whileALiteralIsJudgedOnTheCallersThread()
    {
        baseUrl("api.example.com/x", null);
        tunnel("api.example.com", 443, headers());
        assertEquals(2, resolvedOn.size());
        assertTrue(resolvedOn.stream().allMatch(thread -> thread.startsWith("sandgate-dns-")), "resolved on " + resolvedOn);
        // Refused before the call returns: no lookup thread, no future.
        GatewayException metadata = assertThrows(GatewayException.class,
            () -> planner.plan(EgressPlan.Entry.BASE_URL, "169.254.169.254/latest/meta-data", null, headers(EgressPlanner.TASK_TYPE, "web"), Optional.empty()));
        assertEquals(403, metadata.status());
        assertEquals(2, resolved.size());
    }

    @Test
    void plan_declaredBodyAboveTheRoutesLimit_isTooLarge_beforeResolving()
    {
        GatewayException tooLarge = refused(() -> baseUrl("api.example.com/upload", null, "Content-Length", String.valueOf(10 * 1024 * 1024 + 1)));
        assertEquals(413, tooLarge.status());
        assertTrue(resolved.isEmpty(), "resolved " + resolved);
        assertEquals("/upload", baseUrl("api.example.com/upload", null, "Content-Length", String.valueOf(10 * 1024 * 1024)).pathAndQuery());
    }

    @Test
    void plan_refusesPrivateTarget()
    {
        for (Runnable call : List.<Runnable>of(
            () -> baseUrl("internal.example.com/x", null),
            () -> tunnel("internal.example.com", 443, headers()),
            () -> forwardProxy("internal.example.com/x", null, headers()),
            () -> baseUrl("169.254.169.254/latest/meta-data", null, EgressPlanner.TASK_TYPE, "web")))
        {
            GatewayException refused = refused(call);
            assertEquals(403, refused.status(), refused.getMessage());
            assertFalse(refused.getMessage().contains("10.0.0.5"), "a name's resolved address is not revealed: " + refused.getMessage());
        }
    }

    @Test
    void plan_refusedForAnotherReason_neverResolvesItsTarget()
    {
        assertEquals(403, refused(() -> baseUrl("example.org/x", null)).status());
        assertEquals(401, refused(() -> baseUrl("llm.example.com/v1/chat", null)).status());
        assertEquals(422, refused(() -> baseUrl("api.example.com/leak/" + REAL_KEY, null)).status());
        assertEquals(List.of(), resolved);
    }

    @Test
    void plan_noRoute_isForbidden_andSaysForWhichTaskType()
    {
        GatewayException refused = refused(() -> tunnel("example.org", 443, headers(EgressPlanner.TASK_TYPE, "scrape")));
        assertEquals(403, refused.status());
        assertEquals("no egress route for example.org and task type scrape", refused.getMessage());
    }

    @Test
    void plan_malformedHostOrPort_isBadRequest()
    {
        for (String path : List.of("..%2f..%2fetc/x", ".example.com/x", "a..example.com/x", "api.example.com:70000/x", "api_example.com/x"))
            assertEquals(400, refused(() -> baseUrl(path, null)).status(), path);
    }

    /** A query no URI holds failed later, in the proxy's steps, with a 500 naming the pinned address. */
    @Test
    void plan_queryThatIsNoUris_isBadRequest_beforeResolving()
    {
        for (String query : List.of("x=%zz", "x=%", "x=%4", "x=a|b", "x={y}", "x=a\"b"))
        {
            GatewayException refused = refused(() -> baseUrl("api.example.com/x", query));
            assertEquals(400, refused.status(), query);
            assertFalse(refused.getMessage().contains(query), "the message quotes nothing of the request: " + refused.getMessage());
            assertEquals(400, refused(() -> forwardProxy("api.example.com/x", query, headers())).status(), query);
        }
        assertEquals(List.of(), resolved);
    }

    @Test
    void plan_ipv6LiteralWithEncodedBrackets_isParsed()
    {
        GatewayException refused = refused(() -> baseUrl("%5B::1%5D:8443/x", null, EgressPlanner.TASK_TYPE, "web"));
        assertEquals(403, refused.status(), "[::1] is parsed, and refused as loopback: " + refused.getMessage());
    }

    @Test
    void plan_forwardProxy_goesOverPlainHttp()
    {
        EgressPlan plan = forwardProxy("api.example.com/echo", "q=1", headers());
        assertEquals("http://" + PUBLIC + ":80/echo?q=1", plan.uri());
        assertEquals("api.example.com", plan.target().hostHeader());
    }

    @Test
    void plan_credentialRoute_injectsTheRealKey_inPlaceOfTheToken()
    {
        EgressPlan plan = baseUrl("llm.example.com/v1/chat", null, "Authorization", "Bearer " + TOKEN);
        Credentials.Injection injection = plan.injection().orElseThrow();
        assertEquals(Optional.of("Authorization"), injection.header());
        assertEquals("Bearer " + REAL_KEY, injection.value());
        assertEquals("alpha", injection.agent());
    }

    /** The token goes only in the header the key replaces: anywhere else it is a held secret, refused whatever the route's mode. */
    @Test
    void plan_internalTokenAnywhereButTheHeaderTheKeyReplaces_isRefused_beforeResolving()
    {
        String bearer = "Bearer " + TOKEN;
        List<Runnable> elsewhere = List.of(
            () -> baseUrl("llm.example.com/v1/chat", "t=" + TOKEN, "Authorization", bearer),
            () -> baseUrl("llm.example.com/v1/" + TOKEN.replace("_", "%5F"), null, "Authorization", bearer),
            () -> baseUrl("llm.example.com/v1/chat", null, "Authorization", bearer, "Cookie", "s=" + TOKEN.replace("_", "%5f")),
            () -> baseUrl("api.example.com/x", null, EgressPlanner.TASK_TYPE, "web", "X-Auth-Token", TOKEN),
            () -> baseUrl("api.example.com/x", "t=" + TOKEN, EgressPlanner.TASK_TYPE, "redact"));
        for (Runnable call : elsewhere)
        {
            GatewayException refused = refused(call);
            assertEquals(422, refused.status(), refused.getMessage());
            assertTrue(refused.getMessage().contains("sandgate-agent-token") && !refused.getMessage().contains(TOKEN), refused.getMessage());
        }
        assertEquals(List.of(), resolved);
    }

    @Test
    void plan_credentialRoute_isRefusedOverConnectAndPlainHttp()
    {
        GatewayException tunnel = refused(() -> tunnel("llm.example.com", 443, headers("Authorization", "Bearer " + TOKEN)));
        assertEquals(403, tunnel.status());
        assertTrue(tunnel.getMessage().contains("need base-URL mode"), tunnel.getMessage());
        GatewayException plain = refused(() -> forwardProxy("llm.example.com/v1/chat", null,
            headers("Authorization", "Bearer " + TOKEN)));
        assertEquals(403, plain.status());
        assertTrue(plain.getMessage().contains("only sent over https"), plain.getMessage());
    }

    @Test
    void plan_internalTokenOnARouteWithoutCredential_isRefused()
    {
        assertEquals(403, refused(() -> baseUrl("api.example.com/x", null, "x-api-key", TOKEN)).status());
        assertTrue(baseUrl("api.example.com/x", null, "Authorization", "Bearer agents-own-key-for-this-api").injection().isEmpty(),
            "other keys pass");
    }

    @Test
    void plan_scanningRoute_refusesASecretInTheQuery_andACompressedBody()
    {
        GatewayException secret = refused(() -> baseUrl("api.example.com/x", "key=" + REAL_KEY));
        assertEquals(422, secret.status());
        assertEquals(415, refused(() -> baseUrl("api.example.com/x", null, "Content-Encoding", "gzip")).status());
        baseUrl("api.example.com/x", null, "Content-Encoding", "gzip", EgressPlanner.TASK_TYPE, "web"); // a route that does not scan takes it
    }

    /**
     * A secret in the path or query of a redacting route was counted and logged as redacted but
     * sent as it was. It is replaced where it stands, percent-encoded, and an escape it starts in
     * goes with it (a bare {@code %2} before the marker would be a malformed URL).
     */
    @Test
    void plan_redactingRoute_redactsSecretsInThePathAndQuery_keepingTheUrlWellFormed()
    {
        String aws = "AKIA" + "QWERTYUIOP234567";
        String google = "AIza" + "Sy0123456789abcdefghijklmnopqrstuvw";
        EgressPlan plan = baseUrl("api.example.com/v1/" + aws + "/x", "a=1&q=%2" + google + "&k=" + REAL_KEY + "&b=2", EgressPlanner.TASK_TYPE, "redact");
        String sent = plan.pathAndQuery();
        assertFalse(sent.contains(aws) || sent.contains(google) || sent.contains(REAL_KEY), "a secret would be sent");
        assertEquals("/v1/%5BREDACTED%5D/x?a=1&q=%5BREDACTED%5D&k=%5BREDACTED%5D&b=2", sent);
        assertEquals(422, refused(() -> baseUrl(aws + ".example.com/x", null, EgressPlanner.TASK_TYPE, "redact")).status(),
            "a secret in the target's name cannot be redacted");
    }

    /** A key the gateway holds went out in the URL of a route that does not scan, where a header holding it is refused. */
    @Test
    void plan_heldKeyInTheUrl_isRefused_whateverTheRoutesMode()
    {
        assertEquals(422, refused(() -> baseUrl("api.example.com/x", "k=" + REAL_KEY, EgressPlanner.TASK_TYPE, "web")).status());
        assertEquals(422, refused(() -> baseUrl("api.example.com/files/" + REAL_KEY, null, EgressPlanner.TASK_TYPE, "web")).status());
        String aws = "AKIA" + "QWERTYUIOP234567";
        assertTrue(baseUrl("api.example.com/x", "k=" + aws, EgressPlanner.TASK_TYPE, "web").pathAndQuery().equals("/x?k=" + aws),
            "other secrets pass a route that does not scan");
    }

    /** Every byte of {@code text} as a {@code %XX} escape, as a client may send any byte. */
    private static String percentEncoded(String text)
    {
        StringBuilder escaped = new StringBuilder();
        for (byte b : text.getBytes(java.nio.charset.StandardCharsets.UTF_8))
            escaped.append(String.format("%%%02X", b & 0xFF));
        return escaped.toString();
    }

    /**
     * The URL check read the path and query as they came, so a secret with one character
     * percent-encoded ({@code sk%2Dproj...}), or the gateway's own key escaped byte by byte, went to
     * the target unseen although the target decodes it back. The decoded form is read too.
     */
    @Test
    void plan_percentEncodedSecretsInTheUrl_areFoundLikePlainOnes()
    {
        String openai = "sk-" + "proj-" + "Z9y8X7w6V5u4T3s2R1q0".repeat(2);
        GatewayException oneEscape = refused(() -> baseUrl("api.example.com/x", "key=" + openai.replace("-", "%2D")));
        assertEquals(422, oneEscape.status(), "a rule's secret with an escaped character");
        assertTrue(oneEscape.getMessage().contains("openai-api-key"), oneEscape.getMessage());
        assertEquals(422, refused(() -> baseUrl("api.example.com/v1/" + percentEncoded(openai), null)).status(), "in the path");
        for (String taskType : List.of("web", "default"))
        {
            GatewayException held = refused(() -> baseUrl("api.example.com/x", "k=" + percentEncoded(REAL_KEY), EgressPlanner.TASK_TYPE, taskType));
            assertEquals(422, held.status(), taskType + ": a held key escaped byte by byte, whatever the route's mode");
            assertTrue(held.getMessage().contains("sandgate-credential"), held.getMessage());
            assertFalse(held.getMessage().contains(REAL_KEY), held.getMessage());
        }
        // Lower-case escapes, and malformed ones around the secret, which stay as they are.
        String mixed = "%zz" + REAL_KEY.substring(0, 3) + percentEncoded(REAL_KEY.substring(3, 9)).toLowerCase(java.util.Locale.ROOT) + REAL_KEY.substring(9) + "%4";
        assertEquals(422, refused(() -> baseUrl("api.example.com/x", "k=" + mixed, EgressPlanner.TASK_TYPE, "web")).status());
        assertEquals("/x?a=%25zz&c=%41%42", baseUrl("api.example.com/x", "a=%25zz&c=%41%42").pathAndQuery(), "an innocent URL passes unchanged");
    }

    /**
     * On a redacting route a percent-encoded secret is redacted where it stands in the URL as sent:
     * the whole escaped span becomes one marker, the rest of the URL keeps its own escapes.
     */
    @Test
    void plan_redactingRoute_redactsAPercentEncodedSecret_escapesAndAll()
    {
        String aws = "AKIA" + "QWERTYUIOP234567";
        String encodedAws = aws.substring(0, 4) + percentEncoded(aws.substring(4, 6)) + aws.substring(6);
        EgressPlan plan = baseUrl("api.example.com/v1/%7E" + percentEncoded(REAL_KEY) + "%7E/x",
            "a=%20b&q=" + encodedAws + "&k=" + REAL_KEY.replace("-", "%2d") + "&z=%41", EgressPlanner.TASK_TYPE, "redact");
        assertEquals("/v1/%7E%5BREDACTED%5D%7E/x?a=%20b&q=%5BREDACTED%5D&k=%5BREDACTED%5D&z=%41", plan.pathAndQuery());
    }

    @Test
    void plan_stickyOnlyOnStickyRoutes_andOnlyWhenTheAgentNamesItsSession()
    {
        assertEquals(Optional.of(new EgressPlan.Sticky("main", Optional.empty(), "agent-7", Duration.ofMinutes(7))),
            baseUrl("sticky.example.com/x", null, EgressPlanner.SESSION, "agent-7").sticky());
        assertTrue(baseUrl("sticky.example.com/x", null).sticky().isEmpty());
        assertTrue(baseUrl("api.example.com/x", null, EgressPlanner.SESSION, "agent-7").sticky().isEmpty());
    }

    /**
     * A session name is chosen by the caller: another agent, or anyone calling a route of another
     * pool, may send the same one. The pin is kept under the pool and the agent too, so that such a
     * caller neither joins the session's node nor, by a pin naming a node of its own pool, moves it.
     */
    @Test
    void plan_stickyKey_isScopedByPoolAndAgent()
    {
        EgressPlan.Sticky anonymous = baseUrl("sticky.example.com/x", null, EgressPlanner.SESSION, "agent-7").sticky().orElseThrow();
        EgressPlan.Sticky alpha = tunnel("sticky.example.com", 443,
            headers(EgressPlanner.SESSION, "agent-7", "Authorization", "Bearer " + TOKEN)).sticky().orElseThrow();
        assertEquals(Optional.of("alpha"), alpha.agent(), "the agent named by its token on the CONNECT");
        assertNotEquals(anonymous.key(), alpha.key());
        Duration ttl = Duration.ofMinutes(1);
        assertNotEquals(new EgressPlan.Sticky("main", Optional.empty(), "s", ttl).key(), new EgressPlan.Sticky("other", Optional.empty(), "s", ttl).key());
        // Joined as they are, both would read a/b/-/s.
        assertNotEquals(new EgressPlan.Sticky("a/b", Optional.empty(), "s", ttl).key(), new EgressPlan.Sticky("a", Optional.of("b"), "-/s", ttl).key());
    }

    @Test
    void plan_timeouts_comeFromTheRoute_andTheConnectTimeout()
    {
        EgressPlan plan = baseUrl("api.example.com/x", null, EgressPlanner.TASK_TYPE, "web");
        assertEquals(new EgressPlan.Timeouts(Duration.ofSeconds(2), Duration.ofSeconds(4), Duration.ofSeconds(9)), plan.timeouts());
    }
}
