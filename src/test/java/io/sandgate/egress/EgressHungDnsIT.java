package io.sandgate.egress;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ProxySelector;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.sandgate.net.Resolver;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawConnect;
import io.sandgate.testing.TargetServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Target names whose name server never answers must not take the gateway's request threads. With
 * 40 of them, 80 egress calls wait on such names, on the base-URL and forward-proxy face or as
 * CONNECTs, while health, a call to an IP literal and a call to a name that answers are served
 * within a second; each waiting call then ends with the DNS deadline's 504. Beyond
 * {@code egress.dns-max-in-flight} a lookup is refused at once with 503, also while the lookups
 * that fill the bound have passed their deadline and still hang.
 */
class EgressHungDnsIT
{
    private static final int THREADS = 40;
    private static final int HUNG = 80;
    private static final Duration DNS_TIMEOUT = Duration.ofSeconds(6);
    private static final Duration PROMPT = Duration.ofSeconds(1);
    /** Names under this domain never resolve; {@link #ANSWERING} resolves at once. */
    private static final String HANGING = ".hang.test";
    private static final String ANSWERING = "localhost";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(PROMPT).build();

    private final CountDownLatch nameServerAnswers = new CountDownLatch(1);
    private final AtomicInteger hanging = new AtomicInteger();
    @AutoClose
    private final TargetServer target = TargetServer.start();
    @AutoClose
    private final ForwardProxy node = ForwardProxy.start("n1");
    /** One thread per CONNECT held open, and one for those that must get through. */
    @AutoClose("shutdownNow")
    private final ExecutorService agents = Executors.newFixedThreadPool(HUNG + 1);

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    private void configure(GatewayConfig config)
    {
        config.set("server.max-threads", String.valueOf(THREADS))
            .set("log.access", "false")
            .set("egress.forward-proxy-port", "0")
            .set("egress.dns-timeout", DNS_TIMEOUT.toMillis() + "ms")
            .set("egress.dns-max-in-flight", String.valueOf(HUNG * 2))
            .set("egress.ssrf.allow", "127.0.0.0/8")
            .set("egress.health.tcp-interval", "1h")
            .set("egress.routes", List.of(Map.of("match", Map.of("domains", List.of("127.0.0.1", ANSWERING, "*.test")), "upstream", "main")))
            .set("egress.pools", Map.of("main", Map.of("nodes", List.of(Map.of("id", "n1", "address", node.address())))))
            .trustStoreOf(target)
            .resolver(names());
    }

    /** A name server that never answers for the hanging names, until the test ends. */
    private Resolver names()
    {
        return host ->
        {
            if (host.equals(ANSWERING))
                return List.of(InetAddress.getLoopbackAddress());
            if (!host.endsWith(HANGING))
                throw new UnknownHostException(host);
            hanging.incrementAndGet();
            try
            {
                nameServerAnswers.await();
                throw new UnknownHostException(host);
            }
            catch (InterruptedException x)
            {
                Thread.currentThread().interrupt();
                throw new UnknownHostException(host);
            }
            finally
            {
                hanging.decrementAndGet();
            }
        };
    }

    @AfterEach
    void stop()
    {
        nameServerAnswers.countDown();
    }

    private HttpRequest baseUrl(String authority)
    {
        return HttpRequest.newBuilder(gateway.uri("/egress/" + authority + "/echo")).timeout(Duration.ofSeconds(30)).build();
    }

    private CompletableFuture<HttpResponse<String>> viaForwardProxy(HttpClient proxied, String host)
    {
        return proxied.sendAsync(HttpRequest.newBuilder(URI.create("http://" + host + "/echo")).timeout(Duration.ofSeconds(30)).build(),
            HttpResponse.BodyHandlers.ofString());
    }

    private CompletableFuture<String> connect(String authority)
    {
        return RawConnect.send(gateway.port(), authority, "any", agents);
    }

    /** Health, a call to an IP literal and one to a name that answers, each within a second. */
    private void unrelatedCallsAreServedPromptly() throws Exception
    {
        for (int round = 0; round < 3; round++)
        {
            assertEquals(200, HTTP.send(HttpRequest.newBuilder(gateway.uri("/healthz")).timeout(PROMPT).build(), HttpResponse.BodyHandlers.ofString()).statusCode());
            for (String host : List.of("127.0.0.1", ANSWERING))
            {
                HttpResponse<String> egress = HTTP.send(HttpRequest.newBuilder(gateway.uri("/egress/" + host + ":" + target.httpsPort() + "/echo"))
                    .timeout(PROMPT).build(), HttpResponse.BodyHandlers.ofString());
                assertEquals(200, egress.statusCode(), host + ": " + egress.body());
            }
        }
    }

    @Test
    void namesThatNeverResolve_holdNoRequestThread_onTheBaseUrlAndForwardProxyFaces_andEndWithTheDeadlinesError() throws Exception
    {
        HttpClient proxied = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .proxy(ProxySelector.of(new InetSocketAddress("127.0.0.1", gateway.forwardProxyPort()))).build();
        long started = System.nanoTime();
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < HUNG / 2; i++)
        {
            calls.add(HTTP.sendAsync(baseUrl("base-" + i + HANGING), HttpResponse.BodyHandlers.ofString()));
            calls.add(viaForwardProxy(proxied, "proxied-" + i + HANGING));
        }
        await("every call waiting on its name at once").atMost(DNS_TIMEOUT.dividedBy(2)).until(hanging::get, n -> n == HUNG);

        unrelatedCallsAreServedPromptly();
        assertTrue(calls.stream().noneMatch(CompletableFuture::isDone), "a call ended before its lookup's deadline");

        for (CompletableFuture<HttpResponse<String>> call : calls)
        {
            HttpResponse<String> response = call.get(30, TimeUnit.SECONDS);
            assertEquals(504, response.statusCode(), response.body());
            assertTrue(response.body().contains("\"error\":\"dns_timeout\""), response.body());
            assertTrue(response.body().matches(".*target \\w+-\\d+\\.hang\\.test did not resolve within 6s.*"), response.body());
        }
        assertTrue(System.nanoTime() - started >= DNS_TIMEOUT.toNanos(), "each name had the DNS timeout to answer");
    }

    @Test
    void connectsToNamesThatNeverResolve_holdNoRequestThread_andEndWithTheDeadlinesError() throws Exception
    {
        List<CompletableFuture<String>> connects = new ArrayList<>();
        for (int i = 0; i < HUNG; i++)
            connects.add(connect("tunnel-" + i + HANGING + ":443"));
        await("every CONNECT waiting on its name at once").atMost(DNS_TIMEOUT.dividedBy(2)).until(hanging::get, n -> n == HUNG);

        unrelatedCallsAreServedPromptly();
        String tunnel = connect("127.0.0.1:" + target.httpsPort()).get(PROMPT.toMillis(), TimeUnit.MILLISECONDS);
        assertTrue(tunnel.startsWith("HTTP/1.1 200"), tunnel);
        assertTrue(connects.stream().noneMatch(CompletableFuture::isDone), "a CONNECT ended before its lookup's deadline");

        for (CompletableFuture<String> connect : connects)
            assertTrue(connect.get(30, TimeUnit.SECONDS).startsWith("HTTP/1.1 504"), connect.get());
    }

    @Test
    void lookupsBeyondTheBound_areRefusedAtOnce_untilTheHungOnesReturn_whileLiteralsNeedNone() throws Exception
    {
        int bound = 8;
        gateway.restart(config -> config.set("egress.dns-max-in-flight", String.valueOf(bound)).set("egress.dns-timeout", "1s"));
        List<CompletableFuture<HttpResponse<String>>> calls = new ArrayList<>();
        for (int i = 0; i < bound; i++)
            calls.add(HTTP.sendAsync(baseUrl("base-" + i + HANGING), HttpResponse.BodyHandlers.ofString()));
        await("the bound filled with lookups that hang").atMost(PROMPT.multipliedBy(2)).until(hanging::get, n -> n == bound);
        // Past their deadline the callers are answered, but the lookups still hang and still count.
        for (CompletableFuture<HttpResponse<String>> call : calls)
            assertEquals(504, call.get(30, TimeUnit.SECONDS).statusCode());
        assertEquals(bound, hanging.get());

        HttpResponse<String> refused = HTTP.send(HttpRequest.newBuilder(gateway.uri("/egress/" + ANSWERING + ":" + target.httpsPort() + "/echo"))
            .timeout(PROMPT).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(503, refused.statusCode(), refused.body());
        assertTrue(refused.body().contains("egress.dns-max-in-flight"), refused.body());
        assertTrue(connect(ANSWERING + ":" + target.httpsPort()).get(PROMPT.toMillis(), TimeUnit.MILLISECONDS).startsWith("HTTP/1.1 503"));
        HttpResponse<String> literal = HTTP.send(HttpRequest.newBuilder(gateway.uri("/egress/127.0.0.1:" + target.httpsPort() + "/echo"))
            .timeout(PROMPT).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, literal.statusCode(), "a literal needs no lookup: " + literal.body());

        nameServerAnswers.countDown();
        await("the hung lookups returned their threads").atMost(PROMPT).until(hanging::get, n -> n == 0);
        HttpResponse<String> answered = HTTP.send(HttpRequest.newBuilder(gateway.uri("/egress/" + ANSWERING + ":" + target.httpsPort() + "/echo"))
            .timeout(PROMPT).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, answered.statusCode(), answered.body());
        assertFalse(answered.body().isEmpty());
    }
}
