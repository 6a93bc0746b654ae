package io.sandgate.ingress.servlet;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.IngressConfig;
import io.sandgate.core.Secret;
import io.sandgate.ingress.Grants;
import io.sandgate.ingress.Ingress;
import io.sandgate.ingress.IngressDecision.Forward;
import io.sandgate.ingress.IngressDecision.Source;
import io.sandgate.ingress.Route;
import io.sandgate.ingress.UntouchedRoutes;
import io.sandgate.web.AccessNote;
import io.sandgate.web.ClientInfo;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The session filter without a server: a request and a response stand-in record what the filter
 * reads and writes, and the chain records whether the request went on to the servlet.
 */
class SessionFilterTest
{
    private static final String SECRET = "0123456789abcdef0123456789abcdef";

    private static SessionFilter filter(Map<String, Object> settings)
    {
        Map<String, Object> values = new HashMap<>(settings);
        values.put("ingress.cookie.secret", SECRET);
        IngressConfig config = ConfigLoader.fromValues(values).ingress();
        // The filter reads no route in open access: finding the sandbox's address is the servlet's part.
        // In signed access it reads the sandbox's route for its revocation stamp (there is none here).
        boolean signed = "signed".equals(settings.get("ingress.access"));
        Ingress ingress = new Ingress(config, "", new UnusedRoutes(signed), new ClientInfo(config.trustedProxies()), new SimpleMeterRegistry(), Clock.systemUTC());
        return new SessionFilter(ingress);
    }

    @Test
    void pathWithId_goesOnWithTheDecisionAndTheAccessNote() throws Exception
    {
        Exchange exchange = new Exchange("GET", "/vnc/42/app/ui.js", "v=1");

        exchange.run(filter(Map.of()));

        assertTrue(exchange.chained.get());
        Forward forward = SessionFilter.FORWARD.get(exchange.request);
        assertEquals(new Forward("42", Source.PATH, "/app/ui.js?v=1", forward.setCookie()), forward);
        assertNotNull(forward.setCookie(), "the first path hit sets the cookie, once the sandbox answers");
        assertEquals(new AccessNote(AccessNote.Face.INGRESS, "42", "path"), AccessNote.ATTRIBUTE.get(exchange.request));
        assertTrue(exchange.headers.isEmpty(), "the filter itself writes nothing on the way through: " + exchange.headers);
    }

    @Test
    void idLessRequest_findsTheSandboxByTheCookieThePathHitSet() throws Exception
    {
        SessionFilter filter = filter(Map.of());
        Exchange first = new Exchange("GET", "/vnc/42/", null);
        first.run(filter);
        String setCookie = SessionFilter.FORWARD.get(first.request).setCookie();
        String value = setCookie.substring("vnc_session_id=".length(), setCookie.indexOf(';'));

        Exchange asset = new Exchange("GET", "/vnc/app/ui.js", null);
        asset.requestHeaders.put("Cookie", "other=x; vnc_session_id=" + value);
        asset.run(filter);

        assertTrue(asset.chained.get());
        assertEquals(new Forward("42", Source.COOKIE, "/app/ui.js", null), SessionFilter.FORWARD.get(asset.request));
        assertEquals("cookie", AccessNote.ATTRIBUTE.get(asset.request).via());
    }

    /** The filter reads the Referer and the sandbox header from the request it is given. */
    @ParameterizedTest
    @CsvSource({
        "/vnc/websockify, Referer,      http://gw.example/vnc/7/vnc.html, 7, REFERER, /websockify",
        "/vnc/rest,       X-Sandbox-Id, 9,                                9, HEADER,  /rest",
    })
    void idLessRequest_findsTheSandboxByAHeader(String path, String header, String value, String id, Source source, String upstream) throws Exception
    {
        Exchange exchange = new Exchange("GET", path, null);
        exchange.requestHeaders.put(header, value);

        exchange.run(filter(Map.of()));

        assertEquals(new Forward(id, source, upstream, null), SessionFilter.FORWARD.get(exchange.request));
    }

    @Test
    void idWithoutSlash_isAnsweredWithA308AndStopsThere() throws Exception
    {
        Exchange exchange = new Exchange("GET", "/vnc/42", "a=b");

        exchange.run(filter(Map.of()));

        assertFalse(exchange.chained.get());
        assertEquals(308, exchange.status);
        assertEquals(List.of("/vnc/42/?a=b"), exchange.headers.get("Location"));
        assertEquals(List.of("no-store"), exchange.headers.get("Cache-Control"));
        assertNull(exchange.headers.get("Set-Cookie"));
        assertNull(SessionFilter.FORWARD.get(exchange.request));
        assertEquals(new AccessNote(AccessNote.Face.INGRESS, null, null), AccessNote.ATTRIBUTE.get(exchange.request));
    }

    @Test
    void signedAccess_grantBecomesACookieAndLeavesTheUrlByRedirect() throws Exception
    {
        SessionFilter filter = filter(Map.of("ingress.access", "signed"));
        String grant = Grants.create(new Secret(SECRET), Clock.systemUTC()).issue("42", "alice", Duration.ofMinutes(5));
        Exchange exchange = new Exchange("GET", "/vnc/42/vnc.html", "autoconnect=1&sandgate_grant=" + grant);

        exchange.run(filter);

        assertFalse(exchange.chained.get());
        assertEquals(303, exchange.status);
        assertEquals(List.of("/vnc/42/vnc.html?autoconnect=1"), exchange.headers.get("Location"));
        assertEquals(List.of("no-store"), exchange.headers.get("Cache-Control"));
        List<String> setCookie = exchange.headers.get("Set-Cookie");
        assertEquals(1, setCookie.size());
        assertTrue(setCookie.get(0).startsWith("vnc_session_id="), setCookie.get(0));
    }

    @Test
    void nothingNamesASandbox_isRefusedThroughErrors() throws Exception
    {
        Exchange exchange = new Exchange("GET", "/vnc/app/ui.js", null);

        exchange.run(filter(Map.of()));

        assertFalse(exchange.chained.get());
        assertEquals(404, exchange.status);
        assertEquals(List.of("no-store"), exchange.headers.get("Cache-Control"));
        assertTrue(exchange.body.toString().contains("\"error\":\"not_found\""), exchange.body.toString());
        assertEquals(AccessNote.Face.INGRESS, AccessNote.ATTRIBUTE.get(exchange.request).face());
    }

    @Test
    void signedAccess_withoutAGrant_isForbidden() throws Exception
    {
        Exchange exchange = new Exchange("GET", "/vnc/42/", null);

        exchange.run(filter(Map.of("ingress.access", "signed")));

        assertFalse(exchange.chained.get());
        assertEquals(403, exchange.status);
    }

    /** One request through the filter: what it read, what it wrote, whether it went on. */
    private static final class Exchange
    {
        final Map<String, String> requestHeaders = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        final Map<String, Object> attributes = new HashMap<>();
        final Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        final StringWriter body = new StringWriter();
        final AtomicBoolean chained = new AtomicBoolean();
        final HttpServletRequest request;
        final HttpServletResponse response;
        int status = 200;

        Exchange(String method, String uri, String query)
        {
            requestHeaders.put("Host", "gw.example");
            request = (HttpServletRequest)Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{HttpServletRequest.class},
                (proxy, m, args) -> switch (m.getName())
                {
                    case "getMethod" -> method;
                    case "getRequestURI" -> uri;
                    // A container maps these plain paths as they are: a servlet on /*, at the root.
                    case "getContextPath", "getServletPath" -> "";
                    case "getPathInfo" -> uri;
                    case "getQueryString" -> query;
                    case "getScheme" -> "http";
                    case "getRemoteAddr" -> "192.0.2.1";
                    case "getHeader" -> requestHeaders.get((String)args[0]);
                    case "getHeaders" -> Collections.enumeration(requestHeaders.containsKey((String)args[0]) ? List.of(requestHeaders.get((String)args[0])) : List.of());
                    case "getAttribute" -> attributes.get((String)args[0]);
                    case "setAttribute" -> attributes.put((String)args[0], args[1]);
                    // Mapped to no servlet: the gateway's own error body.
                    case "getHttpServletMapping" -> null;
                    default -> throw new UnsupportedOperationException("request." + m.getName());
                });
            response = (HttpServletResponse)Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{HttpServletResponse.class},
                (proxy, m, args) -> switch (m.getName())
                {
                    case "setStatus" -> status = (Integer)args[0];
                    case "setHeader" -> headers.put((String)args[0], new ArrayList<>(List.of((String)args[1])));
                    case "addHeader" -> headers.computeIfAbsent((String)args[0], name -> new ArrayList<>()).add((String)args[1]);
                    case "isCommitted" -> false;
                    case "resetBuffer", "setContentType" -> null;
                    case "getWriter" -> new PrintWriter(body);
                    default -> throw new UnsupportedOperationException("response." + m.getName());
                });
        }

        void run(SessionFilter filter) throws Exception
        {
            filter.doFilter(request, response, (req, res) -> chained.set(true));
        }
    }

    /** A route table the filter must not touch, but for looking up (and finding nothing) when {@code readable}. */
    private static final class UnusedRoutes extends UntouchedRoutes
    {
        private final boolean readable;

        UnusedRoutes(boolean readable)
        {
            this.readable = readable;
        }

        @Override
        public Optional<Route> find(String id)
        {
            if (readable)
                return Optional.empty();
            throw new AssertionError("the filter looked up a route");
        }
    }
}
