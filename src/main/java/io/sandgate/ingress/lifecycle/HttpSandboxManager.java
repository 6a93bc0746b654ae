package io.sandgate.ingress.lifecycle;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.sandgate.core.Secret;

/**
 * A sandbox manager reached over HTTP: {@code POST {"sandbox": "<id>", "reason": "traffic"}} to
 * resume, {@code "reason": "idle"} to pause, each to its own URL, with a bearer token when one is
 * set. A 2xx is accepted; a 5xx, a 429 or no answer is asked again after a growing pause (no thread
 * sleeps meanwhile); a 404 says the manager has no such sandbox; anything else is a refusal, not
 * asked again. What the manager answers is never
 * logged or passed on: only its status.
 */
public final class HttpSandboxManager implements SandboxManager
{
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int ATTEMPTS = 4;
    private static final long FIRST_PAUSE_MILLIS = 200;
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);

    private final Optional<URI> resumeUrl;
    private final Optional<URI> pauseUrl;
    private final Optional<Secret> token;
    private final ScheduledExecutorService scheduler;
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(REQUEST_TIMEOUT).build();

    /**
     * @param resumeUrl where resumes are asked; empty when they are not
     * @param pauseUrl where pauses are asked; empty when they are not
     * @param scheduler runs the pauses between attempts
     */
    public HttpSandboxManager(Optional<URI> resumeUrl, Optional<URI> pauseUrl, Optional<Secret> token, ScheduledExecutorService scheduler)
    {
        this.resumeUrl = resumeUrl;
        this.pauseUrl = pauseUrl;
        this.token = token;
        this.scheduler = scheduler;
    }

    @Override
    public CompletableFuture<Void> resume(String sandboxId)
    {
        return resumeUrl.map(url -> ask(url, sandboxId, "traffic")).orElseGet(() -> NONE.resume(sandboxId));
    }

    @Override
    public CompletableFuture<Void> pause(String sandboxId)
    {
        return pauseUrl.map(url -> ask(url, sandboxId, "idle")).orElseGet(() -> NONE.pause(sandboxId));
    }

    private CompletableFuture<Void> ask(URI url, String sandboxId, String reason)
    {
        HttpRequest.Builder request = HttpRequest.newBuilder(url).timeout(REQUEST_TIMEOUT)
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(JSON.createObjectNode().put("sandbox", sandboxId).put("reason", reason).toString()));
        token.ifPresent(t -> request.header("Authorization", "Bearer " + t.reveal()));
        CompletableFuture<Void> done = new CompletableFuture<>();
        attempt(request.build(), 1, done);
        return done;
    }

    private void attempt(HttpRequest request, int attempt, CompletableFuture<Void> done)
    {
        client.sendAsync(request, HttpResponse.BodyHandlers.discarding()).whenComplete((response, failure) ->
        {
            if (failure == null && response.statusCode() / 100 == 2)
            {
                done.complete(null);
                return;
            }
            boolean again = failure != null || response.statusCode() >= 500 || response.statusCode() == 429;
            String why = failure != null ? "unreachable (" + rootName(failure) + ")" : "answered " + response.statusCode();
            if (!again || attempt >= ATTEMPTS)
            {
                done.completeExceptionally(new ManagerException("sandbox manager " + why + (again ? " after " + attempt + " attempts" : ""),
                    failure == null && response.statusCode() == 404));
                return;
            }
            scheduler.schedule(() -> attempt(request, attempt + 1, done), FIRST_PAUSE_MILLIS << (attempt - 1), TimeUnit.MILLISECONDS);
        });
    }

    private static String rootName(Throwable failure)
    {
        Throwable root = failure;
        while (root.getCause() != null && root.getCause() != root)
            root = root.getCause();
        return root.getClass().getSimpleName();
    }
}
