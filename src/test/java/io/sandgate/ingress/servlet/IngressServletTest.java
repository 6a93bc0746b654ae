package io.sandgate.ingress.servlet;

import java.time.Clock;
import java.util.List;
import java.util.Map;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.ConfigLoader;
import io.sandgate.config.SandgateConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.ingress.Ingress;
import io.sandgate.ingress.websocket.BrowserUpgrade;
import io.sandgate.ingress.websocket.WebSocketBridge;
import io.sandgate.store.Store;
import io.sandgate.web.ClientInfo;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.thread.Invocable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The servlet front-end's client to sandboxes, as the servlet builds it. What it does with answers
 * is IngressProxyIT's (on both front-ends) and the container tests'; this says how it reads them.
 */
class IngressServletTest
{
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final SandgateConfig config = ConfigLoader.fromValues(Map.of("ingress.cookie.secret", "0123456789abcdef0123456789abcdef"));
    private final Schedulers schedulers = Schedulers.create();
    private final Store store = Store.create(config, registry, schedulers);

    @AfterEach
    void close()
    {
        store.close();
        schedulers.close();
    }

    /**
     * An answer is handled on the thread that read it: a client whose listeners may block hands
     * every answer from its selector to a pool thread: three in ten of the servlet path's thread
     * switches per request at a fixed rate (docs/BENCHMARKS.md).
     */
    @Test
    void clientReadsAnswersOnItsSelector_withoutHandingEachToAPoolThread()
    {
        Ingress ingress = new Ingress(config.ingress(), "", store.routes(), new ClientInfo(List.of()), registry, Clock.systemUTC());
        IngressServlet servlet = new IngressServlet(ingress, new WebSocketBridge(ingress, List.of(), registry, schedulers, BrowserUpgrade.forThisContainer()));

        ClientConnector connector = new ClientConnector();
        HttpClient client = servlet.newHttpClient(connector);

        assertEquals(Invocable.InvocationType.NON_BLOCKING, client.getTransport().getInvocationType());
        assertEquals(Math.min(4, Runtime.getRuntime().availableProcessors()), connector.getSelectors(), "answers handled on one selector would hold the path to one core");
        assertEquals(Ingress.MAX_ANSWER_HEAD, client.getMaxResponseHeadersSize(), "an answer's head the browser's response could not carry fails as a 502");
    }
}
