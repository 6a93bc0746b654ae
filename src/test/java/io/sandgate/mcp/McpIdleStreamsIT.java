package io.sandgate.mcp;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RunningGateway;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Sessions a replica holds while nothing happens cost it no thread: the upstream streams it keeps
 * open for them (a Streamable HTTP server's GET stream, a 2024-11-05 server's SSE stream) are read
 * as their bytes arrive. Read by blocked threads, 20 idle sessions held 20 threads.
 */
class McpIdleStreamsIT
{
    private static final int SESSIONS = 20;

    private final McpUpstream upstream = McpUpstream.start();

    @RegisterExtension
    final GatewayExtension gateway = GatewayExtension.manual(config -> config
        .set("mcp.servers", List.of(
            Map.of("name", "stream", "url", upstream.streamableUrl(), "transport", "streamable"),
            Map.of("name", "legacy", "url", upstream.sseUrl(), "transport", "sse"))));

    @AfterEach
    void stop()
    {
        upstream.close();
    }

    @Test
    void idleSessions_holdNoThreadReadingTheirUpstream_andTheirUpstreamStillReachesThem() throws Exception
    {
        RunningGateway replica = gateway.startAnother();
        RawSseClient.Stream last = null;
        String session = null;
        for (String server : List.of("stream", "legacy"))
        {
            RawSseClient client = new RawSseClient(server);
            for (int i = 0; i < SESSIONS / 2; i++)
            {
                last = client.stream(replica, "", null);
                session = client.openSession(last, replica);
            }
        }

        await("no thread blocked reading an upstream stream").atMost(Duration.ofSeconds(10))
            .untilAsserted(() -> assertEquals(List.of(), readingUpstreams()));

        // Still read: a call on the last session is answered on its stream, through the upstream.
        assertEquals(202, new RawSseClient("legacy").post(replica, session, RawSseClient.call(7)));
        RawSseClient.Event answer = last.next();
        assertTrue(answer.data().contains("\"id\":7"), answer.data());
    }

    /** The threads of this JVM whose stack is in a read of an upstream's event stream. */
    private static List<String> readingUpstreams()
    {
        List<String> reading = new ArrayList<>();
        for (ThreadInfo thread : ManagementFactory.getThreadMXBean().dumpAllThreads(false, false))
        {
            boolean inRead = Arrays.stream(thread.getStackTrace())
                .anyMatch(frame -> frame.getClassName().startsWith(UpstreamStreams.class.getName()) || frame.getClassName().equals(SseReader.class.getName()));
            // The test's own client reads its streams on threads of its own, named so.
            if (inRead && !thread.getThreadName().equals("sse-reader"))
                reading.add(thread.getThreadName());
        }
        return reading;
    }
}
