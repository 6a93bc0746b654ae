package io.sandgate.mcp;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/** What tests of slow and stuck MCP clients look at: the keepalives a client gets, and where the gateway's writes wait. */
final class ClientStreamProbes
{
    private ClientStreamProbes()
    {
    }

    /** Counts the stream's keepalive comments, on a thread of its own, until it ends. */
    static void countKeepalives(InputStream stream, AtomicInteger keepalives)
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
