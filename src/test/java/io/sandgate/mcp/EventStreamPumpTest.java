package io.sandgate.mcp;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import io.sandgate.core.StoreUnavailableException;
import org.eclipse.jetty.io.content.AsyncContent;
import org.eclipse.jetty.io.content.ByteBufferContentSource;
import org.eclipse.jetty.util.Callback;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * An upstream event stream is handed on event by event, in order: an event whose handling is not
 * done (a relay waiting out an unreachable store) holds up the events after it and the stream's
 * end, with no thread waiting for it.
 */
class EventStreamPumpTest
{
    private final ExecutorService workers = Executors.newCachedThreadPool();

    @AfterEach
    void close()
    {
        workers.shutdownNow();
    }

    @Test
    void anEventNotHandledYet_holdsUpTheNextOne_andTheEnd() throws Exception
    {
        AsyncContent upstream = new AsyncContent();
        List<String> handed = new CopyOnWriteArrayList<>();
        Map<String, CompletableFuture<Void>> handling = new ConcurrentHashMap<>();
        CompletableFuture<Throwable> ended = new CompletableFuture<>();
        new EventStreamPump(upstream, workers, event ->
        {
            handed.add(event.data());
            return handling.computeIfAbsent(event.data(), data -> new CompletableFuture<>());
        }, ended::complete).start();

        upstream.write(false, utf8("data: one\n\ndata: tw"), Callback.NOOP);
        upstream.write(true, utf8("o\n\ndata: three\n\n"), Callback.NOOP);
        await().atMost(Duration.ofSeconds(5)).until(() -> handed.size() == 1);
        await().during(Duration.ofMillis(200)).atMost(Duration.ofSeconds(1)).until(() -> handed.size() == 1);

        handling.get("one").complete(null);
        await().atMost(Duration.ofSeconds(5)).until(() -> handed.size() == 2);
        handling.get("two").complete(null);
        await().atMost(Duration.ofSeconds(5)).until(() -> handed.size() == 3);
        assertFalse(ended.isDone(), "the end waits for the last event");

        handling.get("three").complete(null);
        assertNull(ended.get(5, TimeUnit.SECONDS));
        assertEquals(List.of("one", "two", "three"), handed);
    }

    @Test
    void anEventThatFails_endsTheStream_withItsFailure() throws Exception
    {
        List<String> handed = new CopyOnWriteArrayList<>();
        CompletableFuture<Throwable> ended = new CompletableFuture<>();
        CompletableFuture<Void> failing = new CompletableFuture<>();
        new EventStreamPump(new ByteBufferContentSource(utf8("data: one\n\ndata: two\n\n")), workers, event ->
        {
            handed.add(event.data());
            return failing;
        }, ended::complete).start();

        await().atMost(Duration.ofSeconds(5)).until(() -> handed.size() == 1);
        failing.completeExceptionally(new StoreUnavailableException("store down", null));
        assertInstanceOf(StoreUnavailableException.class, ended.get(5, TimeUnit.SECONDS));
        assertEquals(List.of("one"), handed, "nothing after the failed event");
    }

    @Test
    void eventsHandledAtOnce_goOnInOrder_onTheReadingThread() throws Exception
    {
        StringBuilder stream = new StringBuilder();
        List<String> sent = new ArrayList<>();
        for (int i = 0; i < 5000; i++)
        {
            sent.add("m" + i);
            stream.append("data: m").append(i).append("\n\n");
        }
        List<String> handed = new CopyOnWriteArrayList<>();
        CompletableFuture<Throwable> ended = new CompletableFuture<>();
        new EventStreamPump(new ByteBufferContentSource(utf8(stream.toString())), workers, event ->
        {
            handed.add(event.data());
            return EventStreamPump.HANDED_ON;
        }, ended::complete).start();

        assertNull(ended.get(5, TimeUnit.SECONDS));
        assertEquals(sent, handed);
    }

    private static ByteBuffer utf8(String text)
    {
        return ByteBuffer.wrap(text.getBytes(StandardCharsets.UTF_8));
    }
}
