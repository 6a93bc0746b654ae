package io.sandgate.ingress.lifecycle;

import java.util.concurrent.CompletableFuture;

/**
 * The platform's sandbox manager as the gateway asks it: resume a paused sandbox when traffic
 * arrives, pause an idle one. A request is accepted or refused; that a sandbox runs again is learnt
 * from its route turning running, which is the manager's (or its pod watcher's) to write.
 */
public interface SandboxManager
{
    /** Asks nothing: no sandbox is woken or paused by the gateway. */
    SandboxManager NONE = new SandboxManager()
    {
        @Override
        public CompletableFuture<Void> resume(String sandboxId)
        {
            return CompletableFuture.failedFuture(new ManagerException("no sandbox manager is configured"));
        }

        @Override
        public CompletableFuture<Void> pause(String sandboxId)
        {
            return CompletableFuture.failedFuture(new ManagerException("no sandbox manager is configured"));
        }
    };

    /**
     * Asks the manager to resume the sandbox.
     *
     * @return completed when the manager accepted; failed with {@link ManagerException} when it refused
     *         or could not be reached
     */
    CompletableFuture<Void> resume(String sandboxId);

    /** Asks the manager to pause the sandbox; as {@link #resume}. */
    CompletableFuture<Void> pause(String sandboxId);

    /** The manager refused, or could not be asked; the message is the gateway's, safe to log. */
    final class ManagerException extends RuntimeException
    {
        private final boolean unknown;

        public ManagerException(String message)
        {
            this(message, false);
        }

        /** @param unknown whether the manager said it has no such sandbox */
        public ManagerException(String message, boolean unknown)
        {
            super(message, null, false, false);
            this.unknown = unknown;
        }

        /** Whether the manager has no such sandbox: its requests are 404, as for a sandbox without a route. */
        public boolean unknown()
        {
            return unknown;
        }
    }
}
