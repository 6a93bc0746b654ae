package io.sandgate.egress;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import com.fasterxml.jackson.databind.JsonNode;
import io.sandgate.testing.GatewayConfig;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.TargetServer;
import io.sandgate.testing.Tinyproxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Who is blamed when an egress exchange fails, through three real tinyproxy nodes: a target that
 * refuses ejects no node however many agents call it, a node that dies is out within 3 s, and
 * with the default retry agents do not notice the death. The probes run at their default
 * interval (3 s), so what ejects a dead node here is the attribution of failed requests.
 */
class EgressFaultAttributionIT
{
    private static final String ADMIN = "fault-attribution-admin-token";
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    private static final List<String> NODES = List.of("t1", "t2", "t3");

    private TargetServer target;
    private int closedPort;
    /** A port whose accept queue is full: a connect to it hangs, as to a host that drops packets. */
    private ServerSocket blackhole;
    private final List<Socket> queued = new ArrayList<>();
    private final Map<String, Tinyproxy> nodes = new java.util.HashMap<>();

    @RegisterExtension
    final GatewayExtension gateway = new GatewayExtension(this::configure);

    @BeforeEach
    void start() throws IOException
    {
        target = TargetServer.start();
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress()))
        {
            closedPort = taken.getLocalPort();
        }
        blackhole = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress());
        // Linux queues backlog + 1 connections nobody accepts, then drops further SYNs unanswered.
        while (true)
        {
            Socket waiting = new Socket();
            try
            {
                waiting.connect(blackhole.getLocalSocketAddress(), 200);
                queued.add(waiting);
            }
            catch (SocketTimeoutException full)
            {
                waiting.close();
                break;
            }
        }
        for (String name : NODES)
            nodes.put(name, Tinyproxy.start(name, target.httpPort(), target.httpsPort(), closedPort, blackhole.getLocalPort()));
    }

    private void configure(GatewayConfig config)
    {
        config.set("admin.token", ADMIN);
        config.trustStoreOf(target);
        config.set("egress.connect-timeout", "1s");
        config.set("egress.ssrf.allow", "127.0.0.0/8");
        config.set("egress.connect-ports", "443," + blackhole.getLocalPort());
        // No retry key: the default applies.
        config.set("egress.routes", List.of(
            Map.of("match", Map.of("domains", List.of("127.0.0.1"), "task_type", "sticky"), "upstream", "main", "scheme", "http",
                "sticky_session", true),
            Map.of("match", Map.of("domains", List.of("127.0.0.1")), "upstream", "main", "scheme", "http")));
        List<Map<String, Object>> pool = new ArrayList<>();
        for (String name : NODES)
            pool.add(Map.of("id", name, "address", nodes.get(name).address(), "region", "eu", "weight", 100));
        config.set("egress.pools", Map.of("main", Map.of("region", "eu", "nodes", pool)));
    }

    @AfterEach
    void stop() throws IOException
    {
        nodes.values().forEach(Tinyproxy::close);
        target.close();
        for (Socket socket : queued)
            socket.close();
        blackhole.close();
    }

    private HttpResponse<String> call(String method, String path, String session) throws Exception
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(gateway.uri().resolve(path)).timeout(Duration.ofSeconds(15))
            .method(method, method.equals("POST") ? HttpRequest.BodyPublishers.ofString("{\"q\":\"" + session + "\"}") : HttpRequest.BodyPublishers.noBody())
            .header("X-Agent-Session", session);
        return HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    private JsonNode pool() throws Exception
    {
        return PoolView.pool(gateway, ADMIN);
    }

    private boolean ejected(String id) throws Exception
    {
        return PoolView.node(gateway, ADMIN, id).get("ejected").asBoolean();
    }

    private static String node(HttpResponse<?> response)
    {
        return response.headers().firstValue(EgressServlet.NODE).orElse("-");
    }

    /** A CONNECT to the gateway in forward-proxy mode; the status line of its answer. */
    private String connect(String authority) throws IOException
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress("127.0.0.1", gateway.port()), 5000);
            socket.setSoTimeout(10_000);
            OutputStream out = socket.getOutputStream();
            out.write(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder line = new StringBuilder();
            for (int b = in.read(); b >= 0 && b != '\n'; b = in.read())
                line.append((char)b);
            return line.toString().trim();
        }
    }

    @Test
    void closedTargetPort_calledByManyAgents_ejectsNoNode_butADeadNodeIsOutWithinThreeSeconds() throws Exception
    {
        ExecutorService agents = Executors.newFixedThreadPool(4);
        try
        {
            List<Future<Integer>> statuses = new ArrayList<>();
            for (int i = 0; i < 100; i++)
            {
                String agent = "agent-" + i % 4;
                statuses.add(agents.submit(() -> call("GET", "/egress/127.0.0.1:" + closedPort + "/x", agent).statusCode()));
            }
            for (Future<Integer> status : statuses)
                assertEquals(502, status.get(), "the target refuses");
        }
        finally
        {
            agents.shutdownNow();
        }
        for (int i = 0; i < 6; i++)
        {
            String answer = connect("127.0.0.1:" + closedPort);
            assertFalse(answer.contains(" 200 "), answer);
        }
        for (String id : NODES)
            assertFalse(ejected(id), id + " is not to blame for a refusing target: " + pool());
        assertFalse(pool().get("panic").asBoolean());
        assertEquals(200, call("GET", "/egress/127.0.0.1:" + target.httpPort() + "/echo", "agent-0").statusCode());

        nodes.get("t1").close();
        long killed = System.nanoTime();
        // Traffic goes on meanwhile (the refusals above have spent the retry budget, so a GET may fail here).
        await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(20)).until(() ->
        {
            call("GET", "/egress/127.0.0.1:" + target.httpPort() + "/echo", "agent-1");
            return ejected("t1");
        });
        long out = (System.nanoTime() - killed) / 1_000_000;
        assertTrue(out < 3000, "a dead node is out after " + out + " ms");
        assertFalse(ejected("t2") || ejected("t3"));
        for (int i = 0; i < 10; i++)
            assertNotEquals("t1", node(call("GET", "/egress/127.0.0.1:" + target.httpPort() + "/echo", "agent-2")));
    }

    @Test
    void blackholedTarget_leavesIdleNodesSilent_andEjectsNone() throws Exception
    {
        // Each node takes the CONNECT and keeps trying the target while the gateway's timeout runs
        // out: from outside, the same as a hung node. Four agents at once, two attempts each, and no
        // other traffic that could show the nodes alive; before, that ejected them all.
        ExecutorService agents = Executors.newFixedThreadPool(4);
        try
        {
            List<Future<String>> answers = new ArrayList<>();
            for (int i = 0; i < 4; i++)
                answers.add(agents.submit(() -> connect("127.0.0.1:" + blackhole.getLocalPort())));
            for (Future<String> answer : answers)
                assertTrue(answer.get().startsWith("HTTP/1.1 5"), answer.get());
        }
        finally
        {
            agents.shutdownNow();
        }
        for (String id : NODES)
            assertFalse(ejected(id), id + " is not to blame for a target that drops packets: " + pool());
        assertEquals(200, call("GET", "/egress/127.0.0.1:" + target.httpPort() + "/echo", "agent-0").statusCode());
    }

    @Test
    void deadNode_getsNoGetOrPostOfAnAgentLost_withoutAnyRetrySetting() throws Exception
    {
        nodes.get("t2").close();
        for (int i = 0; i < 30; i++)
        {
            HttpResponse<String> get = call("GET", "/egress/127.0.0.1:" + target.httpPort() + "/echo", "agent-" + i);
            assertEquals(200, get.statusCode(), get.body());
            HttpResponse<String> post = call("POST", "/egress/127.0.0.1:" + target.httpPort() + "/echo", "post-" + i);
            assertEquals(200, post.statusCode(), "a POST whose node refused is sent again through another: " + post.body());
            assertTrue(post.body().contains("{\"q\":\"post-" + i + "\"}"), "the whole body, held for the retry: " + post.body());
            assertNotEquals("t2", node(post));
        }
        long posts = target.requests().stream().filter(r -> r.method().equals("POST")).count();
        assertEquals(30, posts, "each POST reached the target once");
    }

    @Test
    void stickyPin_staysWhileAllNodesAreHealthy() throws Exception
    {
        String path = "/egress/127.0.0.1:" + target.httpPort() + "/echo";
        HttpRequest.Builder sticky = HttpRequest.newBuilder(gateway.uri().resolve(path)).header("X-Agent-Task-Type", "sticky")
            .header("X-Agent-Session", "agent-7");
        String pinned = node(HTTP.send(sticky.build(), HttpResponse.BodyHandlers.ofString()));
        // A target that refuses now and then: each refusal is retried on other nodes, and no node is to blame.
        HttpRequest refused = HttpRequest.newBuilder(gateway.uri().resolve("/egress/127.0.0.1:" + closedPort + "/x"))
            .header("X-Agent-Task-Type", "sticky").header("X-Agent-Session", "agent-7").build();
        for (int i = 0; i < 5; i++)
        {
            HttpResponse<String> failed = HTTP.send(refused, HttpResponse.BodyHandlers.ofString());
            assertEquals(502, failed.statusCode());
            assertTrue(failed.headers().firstValue(EgressServlet.STICKY).isEmpty(), "the pin did not move");
            HttpResponse<String> again = HTTP.send(sticky.build(), HttpResponse.BodyHandlers.ofString());
            assertEquals(pinned, node(again), "a retry elsewhere leaves the pin on its healthy node");
            assertTrue(again.headers().firstValue(EgressServlet.STICKY).isEmpty());
        }
    }
}
