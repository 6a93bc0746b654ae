package io.sandgate.mcp;

import java.util.List;
import java.util.Map;

import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.McpUpstream;
import io.sandgate.testing.RawRedis;
import io.sandgate.testing.RedisServerProcess;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An answer the gateway makes itself (here the tool policy's refusal, on the legacy HTTP+SSE
 * transport) is written to the session's log on the thread of the POST that asked. When Redis
 * reads the session but will not take the write (here: scripts denied to the gateway's Redis user
 * after the session began), the POST is told 503 at once, rather than its thread retrying for a
 * minute; once Redis takes writes again the same POST is refused by the policy as usual.
 */
class McpAnswerUnstoredIT
{
    private static final RedisServerProcess redis = RedisServerProcess.start();
    private static final McpUpstream upstream = McpUpstream.start();
    private static final RawSseClient CLIENT = new RawSseClient("sse");
    private static final String DENIED_CALL = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{\"name\":\"add\",\"arguments\":{\"a\":1,\"b\":2}}}";

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .redisStore(redis)
        .set("log.access", "false")
        .set("mcp.servers", List.of(Map.of("name", "sse", "url", upstream.sseUrl(), "transport", "sse",
            "tools", Map.of("deny", List.of("add"))))));

    @AfterAll
    static void stop()
    {
        upstream.close();
        redis.close();
    }

    @Test
    void aRefusalTheStoreWillNotTake_failsThePostAtOnce_andIsMadeAgainOnItsRetry() throws Exception
    {
        RawSseClient.Stream stream = CLIENT.stream(gateway, "", null);
        String session = CLIENT.openSession(stream, gateway);
        try (RawRedis raw = RawRedis.connect(redis.port()))
        {
            // The session's record is still read (HGETALL); the append, a script, is refused.
            raw.command("ACL", "SETUSER", "default", "-@scripting");
            try
            {
                // RawSseClient gives a POST 10 s: the old way waited up to a minute before answering 202.
                assertEquals(503, CLIENT.post(gateway, session, DENIED_CALL));
            }
            finally
            {
                raw.command("ACL", "SETUSER", "default", "+@all");
            }
        }

        assertEquals(202, CLIENT.post(gateway, session, DENIED_CALL));
        RawSseClient.Event refusal = stream.next();
        assertEquals("message", refusal.name());
        assertTrue(refusal.data().contains("\"id\":7") && refusal.data().contains("error"), refusal.data());
    }
}
