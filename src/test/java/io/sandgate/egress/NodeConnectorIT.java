package io.sandgate.egress;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.sandgate.net.Cidr;
import io.sandgate.net.SsrfGuard;
import io.sandgate.testing.ForwardProxy;
import io.sandgate.testing.TargetServer;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.transport.HttpClientTransportOverHTTP;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.util.thread.Scheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A request on a freshly opened tunnel through a node goes out even when the thread that wrote the
 * tunnel's CONNECT has not yet returned from that write when the node's 200 arrives: the race that
 * failed about one plain-http request in ten through a node on loopback with a
 * WritePendingException. Here the writer is held back after its bytes left, every time.
 */
class NodeConnectorIT
{
    private TargetServer target;
    private ForwardProxy node;
    private PinnedHttpClient client;

    @BeforeEach
    void start() throws Exception
    {
        target = TargetServer.start();
        node = ForwardProxy.start("node-a");
        NodeConnector connector = new SlowConnectWriter();
        connector.setSelectors(1);
        client = new PinnedHttpClient(new HttpClientTransportOverHTTP(connector));
        client.getProxyConfiguration().addProxy(new PinnedHttpProxy("127.0.0.1", node.port()));
        client.start();
    }

    @AfterEach
    void stop() throws Exception
    {
        if (client != null)
            client.stop();
        if (node != null)
            node.close();
        if (target != null)
            target.close();
    }

    @Test
    void http_requestOnAFreshTunnel_waitsForTheConnectWriteToComplete() throws Exception
    {
        SsrfGuard guard = new SsrfGuard(List.of(Cidr.parse("127.0.0.0/8")), host -> List.of(InetAddress.getLoopbackAddress()));
        PinnedTarget pinned = PinnedTarget.check(guard, "http", "localhost", target.httpPort());

        for (int i = 0; i < 5; i++)
        {
            // Connection: close, so that every request opens a tunnel of its own.
            ContentResponse response = client.newRequest(pinned, "/echo")
                .headers(headers -> headers.put(HttpHeader.CONNECTION, HttpHeaderValue.CLOSE.asString()))
                .timeout(10, TimeUnit.SECONDS).send();
            assertEquals(200, response.getStatus(), response.getContentAsString());
        }
        assertEquals(5, node.connects());
        assertEquals(5, target.requestCount());
    }

    /** Returns from the write of a CONNECT only well after its bytes have reached the node. */
    private static final class SlowConnectWriter extends NodeConnector
    {
        @Override
        protected SerialWriteEndPoint newEndPoint(SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler)
        {
            return new SerialWriteEndPoint(channel, selector, key, scheduler)
            {
                @Override
                public boolean flush(ByteBuffer... buffers) throws IOException
                {
                    boolean connect = buffers.length > 0 && StandardCharsets.ISO_8859_1.decode(buffers[0].duplicate()).toString().startsWith("CONNECT ");
                    boolean flushed = super.flush(buffers);
                    if (connect && flushed)
                        pause();
                    return flushed;
                }
            };
        }

        private static void pause()
        {
            try
            {
                // Long enough for the node to answer and the 200 to be read meanwhile.
                Thread.sleep(100);
            }
            catch (InterruptedException x)
            {
                Thread.currentThread().interrupt();
            }
        }
    }
}
