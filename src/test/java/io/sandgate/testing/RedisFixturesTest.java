package io.sandgate.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The fixtures other tests build on: if these are wrong, failures elsewhere would be blamed on the
 * gateway.
 */
class RedisFixturesTest
{
    @Test
    void rawClientWritesAndReadsHashes() throws IOException
    {
        try (RedisServerProcess redis = RedisServerProcess.start();
                RawRedis raw = RawRedis.connect(redis.port()))
        {
            assertEquals("redis://127.0.0.1:" + redis.port(), redis.address());
            assertEquals("PONG", raw.command("PING"));

            assertEquals(1L, raw.hset("routes", "tenant-a", "http://10.0.0.1:8080"));
            assertEquals(0L, raw.hset("routes", "tenant-a", "http://10.0.0.2:8080"), "overwrite");
            assertEquals("http://10.0.0.2:8080", raw.hget("routes", "tenant-a"));

            assertEquals(1L, raw.hdel("routes", "tenant-a"));
            assertNull(raw.hget("routes", "tenant-a"));
            assertEquals(0L, raw.hdel("routes", "tenant-a"));
            assertNull(raw.hget("no-such-key", "field"));
        }
    }

    @Test
    void rawClientSpeaksUtf8OnTheWire() throws IOException
    {
        try (RedisServerProcess redis = RedisServerProcess.start();
                RawRedis raw = RawRedis.connect(redis.port()))
        {
            String value = "crème brûlée → ✓ \uD83D\uDE80\r\nnot a line end";
            raw.hset("h", "clé", value);

            assertEquals(value, raw.hget("h", "clé"));
            // A round trip alone would also pass with a symmetric wrong encoding; the server-side
            // length pins the bytes actually stored.
            assertEquals(
                    (long) value.getBytes(StandardCharsets.UTF_8).length,
                    raw.command("HSTRLEN", "h", "clé"));
        }
    }

    @Test
    void rawClientParsesErrorsAndNestedArrays() throws IOException
    {
        try (RedisServerProcess redis = RedisServerProcess.start();
                RawRedis raw = RawRedis.connect(redis.port()))
        {
            IllegalStateException arity =
                    assertThrows(IllegalStateException.class, () -> raw.command("HGET", "only-key"));
            assertTrue(arity.getMessage().contains("wrong number of arguments"), arity.getMessage());

            raw.command("SET", "plain", "x");
            IllegalStateException wrongType =
                    assertThrows(IllegalStateException.class, () -> raw.hget("plain", "f"));
            assertTrue(wrongType.getMessage().startsWith("WRONGTYPE"), wrongType.getMessage());

            assertEquals("OK", raw.command("MULTI"));
            assertEquals("QUEUED", raw.command("HSET", "h", "f", "v"));
            assertEquals("QUEUED", raw.command("HGETALL", "h"));
            assertEquals(List.of(1L, List.of("f", "v")), raw.command("EXEC"));

            // An error inside EXEC's array must surface without desynchronising the connection.
            raw.command("MULTI");
            raw.command("HGET", "plain", "f");
            raw.command("PING");
            assertThrows(IllegalStateException.class, () -> raw.command("EXEC"));
            assertEquals("PONG", raw.command("PING"));
        }
    }

    @Test
    void serverIsEphemeralAndLoopbackOnly() throws IOException
    {
        try (RedisServerProcess redis = RedisServerProcess.start();
                RawRedis raw = RawRedis.connect(redis.port()))
        {
            assertEquals("", raw.configGet("save"));
            assertEquals("no", raw.configGet("appendonly"));
            assertEquals("127.0.0.1", raw.configGet("bind"));
            assertEquals("no", raw.configGet("protected-mode"));
            assertEquals(Integer.toString(redis.port()), raw.configGet("port"));
            assertEquals(redis.logFile().toString(), raw.configGet("logfile"));
            assertNull(raw.configGet("no-such-parameter"));
        }
    }

    @Test
    void aServerThatLostItsPort_isStartedAgainOnAFreshOne_andTheLastFailureIsToldWhenNoneWorks()
    {
        List<Integer> tried = new ArrayList<>();
        int started = ProcessFixture.onFreshPorts(port ->
        {
            tried.add(port);
            if (tried.size() == 1)
                throw new IllegalStateException("port " + port + " was taken");
            return port;
        });
        assertEquals(2, tried.size());
        assertEquals(tried.get(1), started);

        tried.clear();
        IllegalStateException failure = assertThrows(IllegalStateException.class, () -> ProcessFixture.onFreshPorts(port ->
        {
            tried.add(port);
            throw new IllegalStateException("port " + port + " was taken");
        }));
        assertEquals("port " + tried.get(tried.size() - 1) + " was taken", failure.getMessage());
        assertTrue(tried.size() > 1, "more than one attempt before giving up");
    }

    @Test
    void killRefusesConnectionsAndRestartServesTheSamePortEmpty() throws IOException
    {
        Path logFile;
        int port;
        try (RedisServerProcess redis = RedisServerProcess.start())
        {
            port = redis.port();
            logFile = redis.logFile();
            RawRedis before = RawRedis.connect(port);
            before.hset("routes", "tenant-a", "up");

            redis.kill();

            assertThrows(ConnectException.class, () -> RawRedis.connect(port));
            assertThrows(UncheckedIOException.class, () -> before.command("PING"),
                    "a connection opened before the kill must be dead, as a crashed server's would");
            before.close();
            assertDoesNotThrow(redis::kill, "kill is idempotent");

            redis.restart();

            assertEquals(port, redis.port());
            try (RawRedis after = RawRedis.connect(port))
            {
                assertEquals("PONG", after.command("PING"));
                assertNull(after.hget("routes", "tenant-a"), "nothing persisted across the restart");
            }
            assertTrue(Files.readString(logFile).contains("Ready to accept connections"));
        }

        assertThrows(ConnectException.class, () -> RawRedis.connect(port), "close kills the server");
        assertFalse(Files.exists(logFile), "close removes the working directory");
    }
}
