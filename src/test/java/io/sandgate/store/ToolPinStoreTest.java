package io.sandgate.store;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import io.sandgate.mcp.ToolPinStore;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the tool pins ask of the store, in memory and in a real Redis alike: compare-and-set writes, a first list set whole once, announcements. */
class ToolPinStoreTest
{
    @AutoClose
    private static final RedissonOnRedis redis = RedissonOnRedis.start();
    private static int sequence;

    static Stream<ToolPinStore> stores()
    {
        return Stream.of(ToolPinStore.inMemory(), new RedisToolPinStore(redis.client));
    }

    /** A server name no other test uses: the Redis hashes are shared by the whole class. */
    private static String server()
    {
        return "server-" + (++sequence);
    }

    private static <T> T join(CompletableFuture<T> future) throws Exception
    {
        return future.get(5, TimeUnit.SECONDS);
    }

    @ParameterizedTest
    @MethodSource("stores")
    void replace_setsOnlyWhatItExpects_andAnnouncesEachWrite(ToolPinStore store) throws Exception
    {
        String server = server();
        List<String> heard = new CopyOnWriteArrayList<>();
        store.onChange(heard::add);
        join(store.all(server));

        assertTrue(join(store.replace(server, "read", null, "v1")));
        assertFalse(join(store.replace(server, "read", null, "v2")), "a record there already");
        assertFalse(join(store.replace(server, "read", "v0", "v2")), "not the record expected");
        assertTrue(join(store.replace(server, "read", "v1", "v2")));
        assertEquals(Map.of("read", "v2"), join(store.all(server)));
        await().until(() -> heard.size() == 2);
        assertEquals(List.of(server, server), heard);
    }

    @ParameterizedTest
    @MethodSource("stores")
    void trustFirst_setsAWholeListOnce_andOnlyOnAServerWithNoRecords(ToolPinStore store) throws Exception
    {
        String server = server();
        Map<String, String> first = new LinkedHashMap<>();
        for (int i = 0; i < 5000; i++)
            first.put("tool-" + i, "{\"approved\":" + i + "}");
        assertTrue(join(store.trustFirst(server, first)));
        assertEquals(first, join(store.all(server)));
        assertFalse(join(store.trustFirst(server, Map.of("other", "x"))), "a second first list");
        assertEquals(5000, join(store.all(server)).size());

        String another = server();
        assertTrue(join(store.replace(another, "read", null, "v1")));
        assertFalse(join(store.trustFirst(another, Map.of("write", "x"))), "a server with a record is no longer new");
        assertEquals(Map.of("read", "v1"), join(store.all(another)));
    }
}
