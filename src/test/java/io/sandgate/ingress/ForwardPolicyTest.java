package io.sandgate.ingress;

import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.TraceFlags;
import io.opentelemetry.api.trace.TraceState;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.SandgateConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.ingress.IngressDecision.Forward;
import io.sandgate.ingress.IngressDecision.Redirect;
import io.sandgate.ingress.IngressDecision.Source;
import io.sandgate.ingress.SandboxHead.Body;
import io.sandgate.store.Store;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.NoScript;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The one policy both ingress front-ends apply to a forward, without either of them: what the
 * sandbox gets of the client's headers, and what the browser gets of the sandbox's.
 */
class ForwardPolicyTest
{
    private static final Route POD = Route.of("10.0.0.7", 6080);
    private static final Forward BY_PATH = new Forward("42", Source.PATH, "/app/x?y=1", null);
    private static final Forward BY_COOKIE = new Forward("42", Source.COOKIE, "/app/x", null);

    private final List<Store> stores = new ArrayList<>();

    private ForwardPolicy policy(String contextPath, Map<String, Object> settings)
    {
        Map<String, Object> values = new HashMap<>(settings);
        values.put("ingress.cookie.secret", "0123456789abcdef0123456789abcdef");
        SandgateConfig config = ConfigLoader.fromValues(values);
        Store store = Store.create(config, new SimpleMeterRegistry(), Schedulers.create());
        stores.add(store);
        return new Ingress(config.ingress(), contextPath, store.routes(), new ClientInfo(List.of()), new SimpleMeterRegistry(), Clock.systemUTC()).policy();
    }

    private ForwardPolicy policy()
    {
        return policy("", Map.of());
    }

    @AfterEach
    void closeStores()
    {
        stores.forEach(Store::close);
    }

    private static HttpFields client(String... namesAndValues)
    {
        HttpFields.Mutable fields = HttpFields.build();
        for (int i = 0; i < namesAndValues.length; i += 2)
            fields.add(namesAndValues[i], namesAndValues[i + 1]);
        return fields;
    }

    private static HttpFields.Mutable copied(ForwardPolicy policy, HttpFields fromClient, boolean trusted)
    {
        HttpFields.Mutable toSandbox = HttpFields.build();
        policy.copyRequestHeaders(fromClient, toSandbox, trusted);
        return toSandbox;
    }

    @Test
    void requestHeaders_goOnAsTheyCame_lessHopByHopHostAndTheSandboxHeader()
    {
        HttpFields fromClient = client("Host", "gw.example", "Accept", "text/html", "Connection", "keep-alive, X-Trace", "Keep-Alive", "timeout=5",
            "TE", "trailers", "Upgrade", "h2c", "X-Trace", "1", "X-Sandbox-Id", "43", "Accept", "image/png");

        HttpFields.Mutable toSandbox = copied(policy(), fromClient, false);

        assertEquals(List.of("Accept: text/html", "Accept: image/png"), toSandbox.stream().map(HttpField::toString).toList());
        assertSame(fromClient.getField(1), toSandbox.getField(0), "a header that goes on is passed as it is, not copied");
    }

    @Test
    void connectionNames_areTheTokensOfEveryConnectionField_butCloseKeepAliveAndTheLength()
    {
        assertEquals(List.of(), ForwardPolicy.connectionNames(client("Accept", "text/html")));
        assertEquals(List.of(), ForwardPolicy.connectionNames(client("Connection", "Keep-Alive")));
        assertEquals(List.of(), ForwardPolicy.connectionNames(client("Connection", "close")));
        assertEquals(List.of("X-Trace"), ForwardPolicy.connectionNames(client("Connection", "keep-alive", "Connection", "X-Trace")),
            "a second Connection field is read even when the first names nothing");
        assertEquals(List.of("X-Trace"), ForwardPolicy.connectionNames(client("Connection", "X-Trace", "Connection", "close")));
        assertEquals(List.of("X-A", "X-B"), ForwardPolicy.connectionNames(client("Connection", "keep-alive, X-A,X-B, Content-Length")));
    }

    @Test
    void cookies_goOnAsOneHeader_withoutTheSessionCookieUnderEitherName()
    {
        HttpFields fromClient = client("Cookie", "theme=dark; vnc_session_id=abc", "Cookie", "__Host-vnc_session_id=def", "Cookie", "lang=en");

        assertEquals("theme=dark; lang=en", copied(policy(), fromClient, false).get(HttpHeader.COOKIE));
        assertNull(copied(policy(), client("Cookie", "vnc_session_id=abc"), false).get(HttpHeader.COOKIE), "nothing left, no header");
    }

    @Test
    void forwardingHeaders_goOnOnlyFromATrustedProxy()
    {
        HttpFields fromClient = client("X-Forwarded-For", "203.0.113.9", "X-Forwarded-Proto", "https", "X-Forwarded-Prefix", "/evil", "X-Real-IP", "1.2.3.4",
            "Forwarded", "for=1.2.3.4");

        assertEquals(0, copied(policy(), fromClient, false).size());
        assertEquals(5, copied(policy(), fromClient, true).size());
    }

    @Test
    void forwardingHeaders_nameTheClient_andTheMountTheSandboxIsUnder()
    {
        ForwardPolicy policy = policy();
        HttpFields.Mutable untrusted = HttpFields.build();
        policy.addForwardingHeaders(untrusted, BY_PATH, "192.0.2.1", "http", "gw.example");
        HttpFields.Mutable behindProxy = copied(policy, client("X-Forwarded-For", "203.0.113.9"), true);
        policy.addForwardingHeaders(behindProxy, BY_COOKIE, "10.0.0.2", "https", "gw.example");

        assertEquals("192.0.2.1", untrusted.get(HttpHeader.X_FORWARDED_FOR));
        assertEquals("http", untrusted.get(HttpHeader.X_FORWARDED_PROTO));
        assertEquals("gw.example", untrusted.get(HttpHeader.X_FORWARDED_HOST));
        assertEquals("/vnc/42", untrusted.get(ClientInfo.X_FORWARDED_PREFIX));
        assertEquals("203.0.113.9, 10.0.0.2", behindProxy.get(HttpHeader.X_FORWARDED_FOR));
        assertEquals("/vnc", behindProxy.get(ClientInfo.X_FORWARDED_PREFIX), "resolved without the id: mounted at the bare prefix");
    }

    @Test
    void theCoreFrontEndsHead_isTheCopyAndThePutsInOnePass_forAnyHeadersAClientSends()
    {
        ForwardPolicy policy = policy();
        Random random = new Random(16);
        String[] names = {"Accept", "Cookie", "Connection", "X-A", "Via", "via", "Expect", "Content-Length", "Transfer-Encoding", "Host",
            "X-Forwarded-For", "x-forwarded-for", "X-Forwarded-Proto", "X-Forwarded-Host", "X-Forwarded-Prefix", "x-forwarded-prefix",
            "X-Forwarded-Port", "Forwarded", "X-Real-IP", "traceparent", "Tracestate", "X-Sandbox-Id", "Referer", "Keep-Alive", "TE", "Upgrade"};
        String[] values = {"1", "a, b", "keep-alive", "close", "X-A", "Via, X-Forwarded-Prefix", "theme=dark; vnc_session_id=abc", "vnc_session_id=x",
            "100-continue", "203.0.113.9", "/evil", "", " padded "};
        Span[] spans = {null, Span.getInvalid(),
            Span.wrap(SpanContext.create("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", TraceFlags.getSampled(), TraceState.getDefault())),
            Span.wrap(SpanContext.create("0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", TraceFlags.getDefault(),
                TraceState.builder().put("vendor", "x").build()))};
        for (int run = 0; run < 20_000; run++)
        {
            HttpFields.Mutable fromClient = HttpFields.build();
            for (int i = random.nextInt(14); i > 0; i--)
                fromClient.add(names[random.nextInt(names.length)], values[random.nextInt(values.length)]);
            boolean trusted = random.nextBoolean();
            Forward forward = random.nextBoolean() ? BY_PATH : BY_COOKIE;
            Body body = Body.values()[random.nextInt(3)];
            Span span = spans[random.nextInt(spans.length)];
            String scheme = random.nextInt(8) == 0 ? null : "https";

            List<String> written = new ArrayList<>();
            policy.requestHead(new SandboxHead()
            {
                @Override
                public void field(HttpField field)
                {
                    field(field.getName(), field.getValue());
                }

                @Override
                public void field(String name, String value)
                {
                    written.add(name + ": " + value);
                }
            }, fromClient, trusted, "1.1 gw", forward, "192.0.2.1", scheme, "gw.example", "10.0.0.7:6080", body, 12, span);

            // The copy and the puts the core front-end made before, and the servlet path still makes.
            HttpFields.Mutable toSandbox = HttpFields.build();
            policy.copyRequestHeaders(fromClient, toSandbox, trusted);
            toSandbox.remove(HttpHeader.EXPECT);
            String via = fromClient.get(HttpHeader.VIA);
            toSandbox.put(HttpHeader.VIA, (via == null || via.isBlank() ? "" : via + ", ") + "1.1 gw");
            String chain = toSandbox.get(HttpHeader.X_FORWARDED_FOR);
            toSandbox.put(HttpHeader.X_FORWARDED_FOR, chain == null ? "192.0.2.1" : chain + ", 192.0.2.1");
            toSandbox.put(HttpHeader.X_FORWARDED_PROTO, scheme);
            toSandbox.put(HttpHeader.X_FORWARDED_HOST, "gw.example");
            toSandbox.put(ClientInfo.X_FORWARDED_PREFIX, policy.mount(forward));
            toSandbox.put(HttpHeader.HOST, "10.0.0.7:6080");
            if (body == Body.CHUNKED)
                toSandbox.put(HttpHeader.TRANSFER_ENCODING, "chunked");
            else if (body == Body.AS_IS)
                toSandbox.put(HttpHeader.CONTENT_LENGTH, "12");
            if (span != null)
                ForwardPolicy.addTraceHeaders(toSandbox, span);

            assertEquals(byName(toSandbox.stream().map(field -> field.getName() + ": " + field.getValue()).toList()), byName(written),
                fromClient + " trusted " + trusted);
        }
    }

    /** Header lines by name, case aside; the order of lines of one name is kept, as it is what a list of values means. */
    private static Map<String, List<String>> byName(List<String> lines)
    {
        Map<String, List<String>> byName = new TreeMap<>();
        for (String line : lines)
        {
            if (line.isEmpty())
                continue;
            int colon = line.indexOf(": ");
            byName.computeIfAbsent(line.substring(0, colon).toLowerCase(Locale.ROOT), name -> new ArrayList<>()).add(line.substring(colon + 2));
        }
        return byName;
    }

    @Test
    void location_intoTheSandbox_isRewrittenUnderItsMount_andAnyOtherIsLeftAlone()
    {
        ForwardPolicy policy = policy("/gw", Map.of());

        assertEquals("/gw/vnc/42/login", location(policy, BY_PATH, "/login"));
        assertEquals("/gw/vnc/42/login?next=%2F", location(policy, BY_PATH, "http://10.0.0.7:6080/login?next=%2F"));
        assertEquals("/gw/vnc/42/", location(policy, BY_PATH, "http://10.0.0.7:6080"));
        assertEquals("/gw/vnc/login", location(policy, BY_COOKIE, "/login"));
        assertEquals("https://idp.example/login", location(policy, BY_PATH, "https://idp.example/login"));
        assertEquals("//idp.example/login", location(policy, BY_PATH, "//idp.example/login"));
        assertEquals("http://10.0.0.8:6080/x", location(policy, BY_PATH, "http://10.0.0.8:6080/x"), "another pod's address is not the sandbox's");
    }

    private static String location(ForwardPolicy policy, Forward forward, String value)
    {
        return policy.toBrowser(new HttpField(HttpHeader.LOCATION, value), forward, POD, List.of()).getValue();
    }

    @Test
    void sandboxCookies_stayUnderTheSandbox_andTheGatewaysOwnIsDropped()
    {
        ForwardPolicy policy = policy();

        assertEquals("pref=1; Path=/vnc/42/app", policy.toBrowser(new HttpField(HttpHeader.SET_COOKIE, "pref=1"), BY_PATH, POD, List.of()).getValue());
        assertNull(policy.toBrowser(new HttpField(HttpHeader.SET_COOKIE, "vnc_session_id=EVIL; Path=/"), BY_PATH, POD, List.of()));
    }

    @Test
    void hopByHopHeaders_andInPathModeAWiderServiceWorkerScope_neverReachTheBrowser()
    {
        ForwardPolicy policy = policy();
        HttpField plain = new HttpField("X-Frame-Options", "DENY");

        assertNull(policy.toBrowser(new HttpField(HttpHeader.CONNECTION, "close"), BY_PATH, POD, List.of()));
        assertNull(policy.toBrowser(new HttpField(HttpHeader.TRANSFER_ENCODING, "chunked"), BY_PATH, POD, List.of()));
        assertNull(policy.toBrowser(new HttpField(ForwardPolicy.SERVICE_WORKER_ALLOWED, "/"), BY_PATH, POD, List.of()));
        assertSame(plain, policy.toBrowser(plain, BY_PATH, POD, List.of()));
    }

    @Test
    void aPathAndQueryAUriCanHold_isKeptAsItIs_otherCharactersAreEscaped()
    {
        String plain = "/a/b%20c;d?x=1&y=%2F:@!$'()*+,=~";
        assertSame(plain, UriEscape.uriSafe(plain));
        assertEquals("/a?x=%7B%7D&q=a%7Cb&p=%25%25%25&u=%25u0041", UriEscape.uriSafe("/a?x={}&q=a|b&p=%%%&u=%u0041"));
        assertEquals("/caf%C3%A9/%F0%9F%99%82?h=%23%5B%5D", UriEscape.uriSafe("/café/\uD83D\uDE42?h=#[]"));
        assertEquals("/a%25", UriEscape.uriSafe("/a%"));
    }

    @Test
    void theFirstHeaderOfAName_isTheOneThatReplacesTheServers()
    {
        HttpFields fromSandbox = client("Date", "Mon", "Set-Cookie", "a=1", "X-Trace", "1", "Set-Cookie", "b=2", "x-trace", "2");

        List<Boolean> first = fromSandbox.stream().map(field -> ForwardPolicy.isFirstOfName(fromSandbox, field)).toList();

        assertEquals(List.of(true, true, true, false, false), first);
    }

    @Test
    void aPresetFieldOfTheSameName_isFoundAmongThePresetOnes_only()
    {
        HttpField[] presets = ForwardPolicy.presets(client("Date", "Tue", "X-Preset", "p", "X-Trace", "1"), 2);

        assertEquals(0, ForwardPolicy.presetOfName(presets, new HttpField(HttpHeader.DATE, "Mon")));
        assertEquals(1, ForwardPolicy.presetOfName(presets, new HttpField("x-preset", "s")));
        assertEquals(-1, ForwardPolicy.presetOfName(presets, new HttpField("X-Trace", "2")));
        assertEquals(-1, ForwardPolicy.presetOfName(presets, new HttpField(HttpHeader.SERVER, "s")));
    }

    @Test
    void confinementPolicy_isPreEncodedOncePerOrigin_forAPlainOrigin()
    {
        ForwardPolicy policy = policy();
        List<HttpField> first = new ArrayList<>();
        List<HttpField> second = new ArrayList<>();

        policy.addToBrowser(BY_COOKIE, "http://gw.example", first::add);
        policy.addToBrowser(BY_COOKIE, "http://gw.example", second::add);

        assertTrue(first.get(0) instanceof PreEncodedHttpField, first.get(0).getClass().getName());
        assertSame(first.get(0), second.get(0));
    }

    @Test
    void confinementPolicy_forAClientsHostWithControlOrNonAsciiCharacters_goesOutAsTheRefusal_neverAsRawBytes()
    {
        // A pre-encoded field's bytes go out unchecked, and the origin comes from the client's Host.
        for (String origin : new String[]{"http://gw\texample", "http://gw\u0085.example", "http://gw\u00e9.example", "http://gw\u007f",
            "http://gw.example\r\nX-Evil: 1"})
        {
            List<HttpField> added = new ArrayList<>();

            policy().addToBrowser(BY_COOKIE, origin, added::add);

            assertEquals(SandboxPolicy.HEADER, added.get(0).getName());
            assertEquals(SandboxPolicy.REFUSAL, added.get(0).getValue(), origin);
        }
        assertFalse(Confinements.isPrintableAscii("default-src http://gw\u00e9.example/vnc/42/"));
        assertFalse(Confinements.isPrintableAscii("default-src http://gw\texample/vnc/42/"));
        assertTrue(Confinements.isPrintableAscii(SandboxPolicy.REFUSAL));
    }

    @Test
    void afterTheSandboxsHeaders_comeTheConfinementPolicy_andTheSessionCookie()
    {
        Forward first = new Forward("42", Source.PATH, "/", "vnc_session_id=v; Path=/vnc/");
        List<String> added = new ArrayList<>();

        policy().addToBrowser(first, "http://gw.example", field -> added.add(field.getName() + ": " + field.getValue()));

        assertEquals(2, added.size(), added::toString);
        assertTrue(added.get(0).startsWith(SandboxPolicy.HEADER + ": default-src "), added.get(0));
        assertTrue(added.get(0).contains("http://gw.example/vnc/42/"), added.get(0));
        assertEquals("Set-Cookie: vnc_session_id=v; Path=/vnc/", added.get(1));
    }

    @Test
    void aRedirectOfTheGateways_carriesNoSandboxPolicy_hostsNoScript_norIsItStored()
    {
        Map<String, String> headers = new HashMap<>();

        new Redirect(308, "/vnc/42/", null).addHeaders(headers::put);

        assertEquals(Map.of(NoScript.CONTENT_SECURITY_POLICY, NoScript.POLICY, NoScript.X_CONTENT_TYPE_OPTIONS, "nosniff",
            "Location", "/vnc/42/", "Cache-Control", "no-store"), headers);
    }

    @Test
    void webSocketUpgrades_areTheGetsThatAskForOne()
    {
        assertTrue(ForwardPolicy.isWebSocketUpgrade("GET", "WebSocket"));
        assertFalse(ForwardPolicy.isWebSocketUpgrade("POST", "websocket"));
        assertFalse(ForwardPolicy.isWebSocketUpgrade("GET", "h2c"));
        assertFalse(ForwardPolicy.isWebSocketUpgrade("GET", null));
    }

    @Test
    void theCookieHeaderWithoutTheSessionCookie_isWhatSplittingAndTrimmingEachPairGives()
    {
        List<String> headers = List.of("", ";", " ; ; ", "a=1", "a=1;b=2", " a=1 ;\tb=2\t", "vnc_session_id=x", "vnc_session_id=x; a=1",
            "a=1; vnc_session_id=x", "a=1;vnc_session_id=x;b=2", "__Host-vnc_session_id=y; c=3", "vnc_session_id", "vnc_session_id=",
            "vnc_session_idx=1", "xvnc_session_id=1", " vnc_session_id=1 ", "a=\"q;r\"; vnc_session_id=1", "a=1;;b=2;", "=;==");
        for (String header : headers)
            assertEquals(bySplitting(header, "vnc_session_id"), ForwardPolicy.withoutSessionCookie(header, "vnc_session_id"), header);
    }

    @Test
    void theSessionCookieARequestIsRoutedOn_isNeverOneTheSandboxGets()
    {
        ForwardPolicy policy = policy();
        assertSessionCookies(policy, "vnc_session_id=s1; a=1", List.of("s1"), "a=1");
        // Jetty's own cookie parser reads these two as the session cookie too.
        assertSessionCookies(policy, "vnc_session_id = s1; a=1", List.of("s1"), "a=1");
        assertSessionCookies(policy, "a=1;\tvnc_session_id\t=\"s1\"", List.of("s1"), "a=1");
        assertSessionCookies(policy, "__Host-vnc_session_id=s2; vnc_session_id=s1", List.of("s2", "s1"), null);
        // Not read, but not passed on either: older parsers start a cookie after a comma.
        assertSessionCookies(policy, "a=1, vnc_session_id=s1; b=2", List.of(), "b=2");
        assertSessionCookies(policy, "a=1,__Host-vnc_session_id =s1", List.of(), null);
        assertSessionCookies(policy, "a=x,y; vnc_session_idx=1; xvnc_session_id=2; vnc_session_id",
            List.of(), "a=x,y; vnc_session_idx=1; xvnc_session_id=2; vnc_session_id");
    }

    private static void assertSessionCookies(ForwardPolicy policy, String header, List<String> read, String forwarded)
    {
        List<String> values = new ArrayList<>();
        policy.addSessionCookies(header, values);
        assertEquals(read, values, header);
        assertEquals(forwarded, copied(policy, client("Cookie", header), false).get(HttpHeader.COOKIE), header);
    }

    /** The plain way: split on semicolons, trim, drop empty pairs and the session cookie's. */
    private static String bySplitting(String header, String name)
    {
        StringBuilder kept = new StringBuilder();
        for (String pair : header.split(";"))
        {
            String trimmed = pair.trim();
            if (trimmed.isEmpty() || trimmed.startsWith(name + "=") || trimmed.startsWith("__Host-" + name + "="))
                continue;
            if (kept.length() > 0)
                kept.append("; ");
            kept.append(trimmed);
        }
        return kept.length() == 0 ? null : kept.toString();
    }
}
