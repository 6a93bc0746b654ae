package io.sandgate.web;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.eclipse.jetty.client.HttpClient;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client's threads, its timeouts' scheduler included, are daemons named after it: a client left
 * running must not keep the JVM from exiting.
 */
class ClientThreadsTest
{
    @Test
    void theWorkersAndTheScheduler_areDaemons_namedAfterTheClient() throws Exception
    {
        HttpClient client = new HttpClient();
        ClientThreads.install(client, "sandgate-test-client");
        client.start();
        try
        {
            CompletableFuture<Thread> worker = new CompletableFuture<>();
            client.getExecutor().execute(() -> worker.complete(Thread.currentThread()));
            CompletableFuture<Thread> timer = new CompletableFuture<>();
            client.getScheduler().schedule(() -> timer.complete(Thread.currentThread()), 1, TimeUnit.MILLISECONDS);
            for (Thread thread : new Thread[] {worker.get(5, TimeUnit.SECONDS), timer.get(5, TimeUnit.SECONDS)})
            {
                assertTrue(thread.isDaemon(), thread.getName());
                assertTrue(thread.getName().startsWith("sandgate-test-client"), thread.getName());
            }
        }
        finally
        {
            client.stop();
        }
    }
}
