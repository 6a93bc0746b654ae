package io.sandgate.mcp;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** What tests of slow and stuck MCP clients look at: the keepalives a client gets, and where the gateway's writes wait. */
final class ClientStreamProbes
{
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    private ClientStreamProbes()
    {
    }

    /**
     * A client that reads an SSE stream as it comes and counts its keepalive comments, on a thread of
     * its own, until the stream ends; closing it ends the stream.
     */
    static final class KeepaliveCount implements AutoCloseable
    {
        private final InputStream stream;
        private final AtomicInteger keepalives = new AtomicInteger();

        private KeepaliveCount(InputStream stream)
        {
            this.stream = stream;
            countKeepalives(stream, keepalives);
        }

        /** The keepalives read so far. */
        int get()
        {
            return keepalives.get();
        }

        @Override
        public void close() throws IOException
        {
            stream.close();
        }
    }

    /** Opens the SSE stream at {@code uri}, which must answer 200, as a client that reads it. */
    static KeepaliveCount readingClient(URI uri) throws Exception
    {
        HttpResponse<InputStream> stream = HTTP.send(HttpRequest.newBuilder(uri).header("Accept", "text/event-stream").build(),
            HttpResponse.BodyHandlers.ofInputStream());
        assertEquals(200, stream.statusCode());
        return new KeepaliveCount(stream.body());
    }

    /** Asks for the SSE stream at {@code path} on a connection of the test's own: what it then reads, if anything, is the test's. */
    static void requestStream(Socket socket, String path) throws IOException
    {
        OutputStream out = socket.getOutputStream();
        out.write(("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    private static void countKeepalives(InputStream stream, AtomicInteger keepalives)
    {
        Thread reader = new Thread(() ->
        {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8)))
            {
                for (String line; (line = lines.readLine()) != null; )
                {
                    if (line.equals(": keepalive"))
                        keepalives.incrementAndGet();
                }
            }
            catch (Exception x)
            {
                // Closed by the test.
            }
        }, "keepalive-reader");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Whether a thread of this JVM, the gateway's, waits in a client stream: a write the client's
     * socket does not take.
     */
    static boolean waitingInClientStream()
    {
        for (ThreadInfo thread : ManagementFactory.getThreadMXBean().dumpAllThreads(false, false))
        {
            if (thread.getThreadState() != Thread.State.WAITING && thread.getThreadState() != Thread.State.TIMED_WAITING)
                continue;
            if (Arrays.stream(thread.getStackTrace()).anyMatch(frame -> frame.getClassName().equals(ClientStream.class.getName())
                || frame.getClassName().startsWith(ClientStream.class.getName() + "$")))
                return true;
        }
        return false;
    }
}
