package io.sandgate.testing;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Callback;

/**
 * A test double of a platform's sandbox manager, on a real HTTP server: the wake protocol's
 * endpoint ({@code POST {"sandbox": "<id>", "reason": "traffic"}}, 2xx to accept). What it does
 * when asked is the test's: it accepts and, after a delay or when the test releases it, runs the
 * test's action (which writes the sandbox's route running, as the platform's pod watcher would); or
 * it never acts, or answers a status of the test's choice. Every call is counted by sandbox, with the Authorization
 * header it came with.
 */
public final class SandboxManagerDouble implements AutoCloseable
{
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Server server;
    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
    /** Every call's {@code reason}, in order. */
    public final List<String> reasons = new CopyOnWriteArrayList<>();
    public final List<String> authorizations = new CopyOnWriteArrayList<>();
    private volatile int status = 202;
    private volatile Duration delay = Duration.ZERO;
    private volatile Consumer<String> action = id -> { };
    private volatile boolean onRelease;
    private final List<String> pending = new CopyOnWriteArrayList<>();

    private SandboxManagerDouble()
    {
        server = LoopbackServers.serve("sandbox-manager", new Endpoint());
    }

    public static SandboxManagerDouble start()
    {
        return new SandboxManagerDouble();
    }

    public URI url()
    {
        return URI.create("http://127.0.0.1:" + LoopbackServers.port(server) + "/sandboxes/resume");
    }

    /** Accepts, and runs {@code action} with the sandbox's id {@code delay} after each call. */
    public SandboxManagerDouble resumingAfter(Duration delay, Consumer<String> action)
    {
        this.status = 202;
        this.delay = delay;
        this.action = action;
        this.onRelease = false;
        return this;
    }

    /** Accepts, and runs {@code action} for each sandbox asked for when the test calls {@link #release()}. */
    public SandboxManagerDouble resumingOnRelease(Consumer<String> action)
    {
        this.status = 202;
        this.action = action;
        this.onRelease = true;
        return this;
    }

    /** Runs the action for every sandbox asked for so far; see {@link #resumingOnRelease}. */
    public void release()
    {
        for (String sandbox : pending)
        {
            pending.remove(sandbox);
            action.accept(sandbox);
        }
    }

    /** Answers every call with {@code status} and does nothing else. */
    public SandboxManagerDouble answering(int status)
    {
        this.status = status;
        this.action = id -> { };
        this.onRelease = false;
        return this;
    }

    public int calls(String sandbox)
    {
        AtomicInteger count = calls.get(sandbox);
        return count == null ? 0 : count.get();
    }

    public int calls()
    {
        return calls.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    /** The calls so far by sandbox, for a failure message that says which sandbox was asked. */
    public Map<String, Integer> callsBySandbox()
    {
        Map<String, Integer> counts = new java.util.TreeMap<>();
        calls.forEach((id, count) -> counts.put(id, count.get()));
        return counts;
    }

    /** Counts the call, then accepts it (acting later, or when released) or answers the test's status. */
    private final class Endpoint extends Handler.Abstract
    {
        @Override
        public boolean handle(Request request, Response response, Callback callback) throws Exception
        {
            JsonNode body = JSON.readTree(Content.Source.asString(request, StandardCharsets.UTF_8));
            String sandbox = body.path("sandbox").asText();
            calls.computeIfAbsent(sandbox, id -> new AtomicInteger()).incrementAndGet();
            reasons.add(body.path("reason").asText());
            String authorization = request.getHeaders().get("Authorization");
            authorizations.add(authorization == null ? "" : authorization);
            int answer = status;
            if (answer / 100 == 2 && onRelease)
                pending.add(sandbox);
            else if (answer / 100 == 2)
                later(sandbox);
            response.setStatus(answer);
            callback.succeeded();
            return true;
        }
    }

    private void later(String sandbox)
    {
        Consumer<String> then = action;
        server.getScheduler().schedule(() -> then.accept(sandbox), delay.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public void close()
    {
        LoopbackServers.stop(server, "sandbox manager");
    }
}
