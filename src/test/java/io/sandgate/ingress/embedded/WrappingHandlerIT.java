package io.sandgate.ingress.embedded;

import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.ScriptedSandbox;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Invocable;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Handler in front of the embedded runner's, wrapping every request, response and callback as
 * Jetty's own wrappers do (a deployment's logging or security handler): the ingress handler, its
 * sandbox connections and the connections' bookkeeping keep working through it, since they use
 * only what a wrapped request offers. A front-end of the gateway's own once gave handlers a partial
 * request that threw {@code UnsupportedOperationException} where a wrapper reached for its parts.
 */
class WrappingHandlerIT
{
    private static ScriptedSandbox sandbox;
    private static ScriptedSandbox silent;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("server.max-concurrent-requests-per-client", "2")
        .set("ingress.cookie.secret", "wrapping-handler-it-secret-0123456789")
        .set("ingress.static-routes", Map.of("7", sandbox.hostPort(), "8", silent.hostPort())));

    @BeforeAll
    static void start() throws Exception
    {
        sandbox = ScriptedSandbox.start((request, out) -> ScriptedSandbox.ok(out, "page " + request.requestLine().split(" ")[1]));
        // Reads each request and never answers.
        silent = ScriptedSandbox.start((request, out) -> true);
    }

    @AfterAll
    static void stop() throws Exception
    {
        sandbox.close();
        silent.close();
    }

    /**
     * The handlers in front of the ingress handler never block, so Jetty reads, decides and resumes
     * each connection on the thread that selected it: a dynamic outermost handler (one whose child
     * may change while the server runs) said it might, and every request went to another thread.
     */
    @Test
    void theGatewaysHandlers_sayTheyNeverBlock() throws Exception
    {
        try (RunningGateway plain = gateway.startAnother())
        {
            assertEquals(Invocable.InvocationType.NON_BLOCKING, plain.invocationType());
        }
    }

    @Test
    void wrappedRequests_reachTheSandbox_andTheirAnswersTheBrowser() throws Exception
    {
        try (RunningGateway wrapped = gateway.startAnother())
        {
            Wrapping wrapping = wrapped.wrapHandler(new Wrapping());
            String host = "localhost:" + wrapped.port();

            RawHttp.Response page = RawHttp.get(wrapped.port(), host, "/vnc/7/index.html");
            assertEquals(200, page.status());
            assertEquals("page /index.html", page.body());

            // Two requests pipelined on one connection, the second answered after the first's async completion.
            try (Socket socket = new Socket("127.0.0.1", wrapped.port()))
            {
                socket.setSoTimeout(10_000);
                socket.getOutputStream().write(("GET /vnc/7/a HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
                    + "GET /vnc/7/b HTTP/1.1\r\nHost: " + host + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                String both = new String(socket.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
                assertTrue(both.contains("page /a") && both.contains("page /b"), both);
            }

            assertEquals(List.of("/vnc/7/index.html", "/vnc/7/a", "/vnc/7/b"), wrapping.paths, "every request went through the wrapper");
            // The last one's callback may complete just after the browser has read its answer.
            await().atMost(Duration.ofSeconds(5)).until(() -> wrapping.completed.get() == 3);
            assertEquals(List.of(), wrapping.failures, "nothing a wrapper reaches for failed");
        }
    }

    /** A browser leaving while its sandbox is silent is noticed through the wrapped request too: its place comes back. */
    @Test
    void aBrowserThatLeaves_isNoticedThroughTheWrapper() throws Exception
    {
        try (RunningGateway wrapped = gateway.startAnother())
        {
            wrapped.wrapHandler(new Wrapping());
            String host = "localhost:" + wrapped.port();
            int closedBefore = silent.closedByPeer();
            int receivedBefore = silent.received().size();
            Socket first = new Socket("127.0.0.1", wrapped.port());
            Socket second = new Socket("127.0.0.1", wrapped.port());
            for (Socket tab : List.of(first, second))
                tab.getOutputStream().write(("GET /vnc/8/wait HTTP/1.1\r\nHost: " + host + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            // Both held at the sandbox before the probe, or the probe may take a place first.
            await().atMost(Duration.ofSeconds(10)).until(() -> silent.received().size() - receivedBefore >= 2);
            await().atMost(Duration.ofSeconds(10)).until(() -> RawHttp.get(wrapped.port(), host, "/vnc/7/x").status() == 429);

            first.close();
            second.close();

            await().atMost(Duration.ofSeconds(10)).until(() -> silent.closedByPeer() - closedBefore >= 2);
            await().atMost(Duration.ofSeconds(10)).until(() -> RawHttp.get(wrapped.port(), host, "/vnc/7/x").status() == 200);
        }
    }

    /** Wraps each request, response and callback, and asks the wrapped request for what handlers ask. */
    static final class Wrapping extends Handler.Wrapper
    {
        final List<String> paths = new CopyOnWriteArrayList<>();
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        final AtomicInteger completed = new AtomicInteger();

        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception
        {
            Request wrappedRequest = new Request.Wrapper(request);
            try
            {
                // What a logging or security handler reaches for.
                wrappedRequest.getComponents().getByteBufferPool();
                wrappedRequest.getConnectionMetaData().getConnection().getEndPoint();
                wrappedRequest.addIdleTimeoutListener(x -> false);
                wrappedRequest.addFailureListener(x -> { });
                wrappedRequest.addHttpStreamWrapper(stream -> stream);
                wrappedRequest.isSecure();
            }
            catch (RuntimeException x)
            {
                failures.add(x);
            }
            paths.add(Request.getPathInContext(wrappedRequest));
            Callback counted = new Callback.Nested(callback)
            {
                @Override
                public void succeeded()
                {
                    completed.incrementAndGet();
                    super.succeeded();
                }
            };
            return super.handle(wrappedRequest, new Response.Wrapper(wrappedRequest, response), counted);
        }
    }
}
