package io.sandgate.web;

import java.time.Duration;

import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.io.ClientConnector;
import org.eclipse.jetty.util.thread.Invocable;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/** The client of the WAR's ingress path (and of any proxy servlet whose upstreams speak HTTP/1.1 alone). */
class UpstreamClientTest
{
    /**
     * An answer is handled on the thread that read it: a client whose listeners may block hands
     * every answer from its selector to a pool thread. Answers are read into heap buffers, which
     * the proxy servlet hands the container without a copy, and a head the browser's response could
     * not carry fails as a bad answer.
     */
    @Test
    void clientReadsAnswersOnItsSelectors_intoHeapBuffers_withTheHeadBounded()
    {
        ClientConnector connector = new ClientConnector();
        HttpClient client = new UpstreamClient(Duration.ofSeconds(3), Duration.ofMinutes(1), 8192).newClient(connector);

        assertEquals(Invocable.InvocationType.NON_BLOCKING, client.getTransport().getInvocationType());
        assertEquals(Math.min(4, Runtime.getRuntime().availableProcessors()), connector.getSelectors(), "answers handled on one selector would hold the path to one core");
        assertEquals(8192, client.getMaxResponseHeadersSize(), "an answer's head the browser's response could not carry fails as a 502");
        assertFalse(client.isUseInputDirectByteBuffers());
        assertEquals(3000, client.getConnectTimeout());
        assertEquals(60_000, client.getDestinationIdleTimeout());
    }
}
