package io.sandgate.web;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The per-client cap without a server: when a request counts, when it stops, and what a refusal says. */
class ClientLimitFilterTest
{
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final ClientLimitFilter filter = new ClientLimitFilter(2, new ClientInfo(List.of()),
        request -> Optional.ofNullable(request.getHeader("X-Test-Agent")), registry);

    /** One exchange; the chain may leave it asynchronous, as a proxy servlet does. */
    private static final class Exchange
    {
        final Map<String, String> requestHeaders = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        final Map<String, Object> attributes = new HashMap<>();
        final Map<String, String> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
        final List<AsyncListener> listeners = new ArrayList<>();
        final AsyncContext context;
        final StringWriter body = new StringWriter();
        final HttpServletRequest request;
        final HttpServletResponse response;
        boolean async;
        boolean chained;
        int status = 200;

        Exchange(String... headerPairs)
        {
            for (int i = 0; i < headerPairs.length; i += 2)
                requestHeaders.put(headerPairs[i], headerPairs[i + 1]);
            context = (AsyncContext)Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {AsyncContext.class},
                (proxy, m, args) -> switch (m.getName())
                {
                    case "addListener" -> listeners.add((AsyncListener)args[0]);
                    default -> throw new UnsupportedOperationException("async." + m.getName());
                });
            request = (HttpServletRequest)Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {HttpServletRequest.class},
                (proxy, m, args) -> switch (m.getName())
                {
                    case "getRemoteAddr" -> "192.0.2.1";
                    case "getHeader" -> requestHeaders.get((String)args[0]);
                    case "getAttribute" -> attributes.get((String)args[0]);
                    case "setAttribute" -> attributes.put((String)args[0], args[1]);
                    case "isAsyncStarted" -> async;
                    case "getAsyncContext" -> context;
                    // Mapped to no servlet: the gateway's own error body.
                    case "getHttpServletMapping" -> null;
                    default -> throw new UnsupportedOperationException("request." + m.getName());
                });
            response = (HttpServletResponse)Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[] {HttpServletResponse.class},
                (proxy, m, args) -> switch (m.getName())
                {
                    case "setStatus" -> status = (Integer)args[0];
                    case "setHeader" -> headers.put((String)args[0], (String)args[1]);
                    case "isCommitted" -> false;
                    case "resetBuffer" -> null;
                    case "setContentType" -> headers.put("Content-Type", (String)args[0]);
                    case "getWriter" -> new PrintWriter(body);
                    default -> throw new UnsupportedOperationException("response." + m.getName());
                });
        }

        /** Runs the filter; the chain goes asynchronous when {@code async} is set. */
        Exchange run(ClientLimitFilter filter, boolean goAsync) throws Exception
        {
            filter.doFilter(request, response, (req, res) ->
            {
                chained = true;
                async = goAsync;
            });
            return this;
        }

        void complete() throws Exception
        {
            for (AsyncListener listener : listeners)
                listener.onComplete(new AsyncEvent(context, request, response));
        }
    }

    private double refused(String identity)
    {
        return registry.get("sandgate.clients.refused").tags("identity", identity).counter().count();
    }

    @Test
    void synchronousRequests_countOnlyWhileTheyRun() throws Exception
    {
        for (int i = 0; i < 5; i++)
            assertTrue(new Exchange().run(filter, false).chained);
        assertEquals(0, refused("address"));
    }

    @Test
    void asynchronousRequests_countUntilTheyComplete_thenTheThirdIs429() throws Exception
    {
        Exchange first = new Exchange().run(filter, true);
        new Exchange().run(filter, true);

        Exchange third = new Exchange("Accept", "application/json").run(filter, false);

        assertEquals(429, third.status);
        assertEquals("1", third.headers.get("Retry-After"));
        assertTrue(third.body.toString().contains("\"error\":\"too_many_requests\""), third.body.toString());
        assertTrue(third.body.toString().contains("server.max-concurrent-requests-per-client"), third.body.toString());
        assertEquals(1, refused("address"));

        first.complete();
        first.complete();
        assertTrue(new Exchange().run(filter, true).chained, "the completed request gave its place back, once");
        assertEquals(429, new Exchange().run(filter, false).status);
    }

    @Test
    void streamHandedToItsFace_stopsCounting() throws Exception
    {
        for (int i = 0; i < 3; i++)
        {
            Exchange stream = new Exchange();
            filter.doFilter(stream.request, stream.response, (req, res) ->
            {
                ClientLimitFilter.streamOpened((HttpServletRequest)req);
                stream.async = true;
            });
        }
        assertTrue(new Exchange().run(filter, false).chained, "three open streams, and requests still pass");
    }

    @Test
    void agentsCountApartFromTheirAddress() throws Exception
    {
        new Exchange("X-Test-Agent", "alpha").run(filter, true);
        new Exchange("X-Test-Agent", "alpha").run(filter, true);

        assertEquals(429, new Exchange("X-Test-Agent", "alpha").run(filter, false).status);
        assertTrue(new Exchange("X-Test-Agent", "beta").run(filter, false).chained);
        assertTrue(new Exchange().run(filter, false).chained, "the address itself holds nothing");
        assertEquals(1, refused("agent"));
        assertEquals(0, refused("address"));
    }

    /** The internal listener's view: each pod's address its own client, the counts shared with the public listener's. */
    @Test
    void theInternalListenersView_countsIpv6ClientsByItsOwnPrefix() throws Exception
    {
        ClientLimitFilter internal = filter.counting(new ClientInfo(List.of(), 128));
        for (String pod : List.of("2001:db8:0:7::1", "2001:db8:0:7::2", "2001:db8:0:7::3"))
        {
            assertNotNull(internal.tryAcquire(pod), pod);
            assertNotNull(internal.tryAcquire(pod), pod);
            assertNull(internal.tryAcquire(pod), pod);
        }
        assertNotNull(filter.tryAcquire("2001:db8:0:7::9"));
        assertNotNull(filter.tryAcquire("2001:db8:0:7::a"));
        assertNull(filter.tryAcquire("2001:db8:0:7::b"), "the public listener counts the /64");
        assertNotNull(filter.tryAcquire("192.0.2.7"));
        assertNotNull(internal.tryAcquire("192.0.2.7"));
        assertNull(filter.tryAcquire("192.0.2.7"), "an IPv4 client is one count on both listeners");
        assertEquals(5, refused("address"));
    }

    /** The attack: a host taking a new IPv6 address from its /64 for every request. */
    @Test
    void ipv6AddressesOfOneNetwork_countAsOneClient() throws Exception
    {
        assertNotNull(filter.tryAcquire("2001:db8:0:7::1"));
        assertNotNull(filter.tryAcquire("2001:db8:0:7::2"));

        assertNull(filter.tryAcquire("2001:db8:0:7:ffff:ffff:ffff:ffff"), "a third address of the same /64 is the same client");
        assertNotNull(filter.tryAcquire("2001:db8:0:8::1"), "the next /64 is another client");
        assertNotNull(filter.tryAcquire("192.0.2.7"));
    }
}
