package io.sandgate.ingress;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

import io.sandgate.web.GatewayException;

/**
 * What the ingress asks when traffic arrives for a sandbox that is not running: its route is
 * {@linkplain Route#running() paused}, or it has none. A waker that resumes sandboxes asks their
 * manager and completes when the route turns running, without a thread waiting meanwhile.
 */
public interface SandboxWaker
{
    /** Wakes nothing: a paused sandbox is 503 until its manager resumes it, an unknown one 404. */
    SandboxWaker NONE = (sandboxId, found) -> found.isEmpty()
        ? CompletableFuture.completedFuture(found)
        : CompletableFuture.failedFuture(paused());

    /**
     * @param sandboxId the sandbox the request is for, its id checked
     * @param found its route as found, paused; or empty when it has none
     * @return the running route; empty when the sandbox has no route and is not to be woken (404);
     *         failed with a {@link GatewayException} (503 with {@code Retry-After}) when it cannot be
     *         woken now or does not come up in time
     */
    CompletableFuture<Optional<Route>> running(String sandboxId, Optional<Route> found);

    /** The refusal of a request for a sandbox that is paused and not being resumed by this gateway. */
    static GatewayException paused()
    {
        return GatewayException.starting("the sandbox is paused; try again once it has been resumed", 10);
    }
}
