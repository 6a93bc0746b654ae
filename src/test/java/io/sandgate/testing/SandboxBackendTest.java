package io.sandgate.testing;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.InputStreamResponseListener;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.StringRequestContent;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SandboxBackendTest
{
    private SandboxBackend backend;
    private HttpClient client;

    @BeforeEach
    void setUp() throws Exception
    {
        backend = SandboxBackend.start("s1");
        client = new HttpClient();
        client.start();
    }

    @AfterEach
    void tearDown() throws Exception
    {
        client.stop();
        backend.close();
    }

    private String url(String pathAndQuery)
    {
        return "http://" + backend.hostPort() + pathAndQuery;
    }

    @Test
    void listensOnLoopbackWithAnEphemeralPort()
    {
        assertTrue(backend.port() > 0);
        assertEquals("127.0.0.1:" + backend.port(), backend.hostPort());
    }

    @Test
    void echoDescribesTheRequestAndRecordsIt() throws Exception
    {
        ContentResponse response = client.newRequest(url("/echo?a=1&b=two"))
                .method(HttpMethod.POST)
                .headers(h -> h.put("X-Trace-Id", "abc123"))
                .body(new StringRequestContent("text/plain", "hello sandbox"))
                .timeout(5, TimeUnit.SECONDS)
                .send();

        assertEquals(200, response.getStatus());
        assertEquals("s1", response.getHeaders().get("X-Backend"));
        List<String> lines = response.getContentAsString().lines().toList();
        assertEquals("backend=s1", lines.get(0));
        assertEquals("method=POST", lines.get(1));
        assertEquals("path=/echo?a=1&b=two", lines.get(2));
        assertTrue(lines.contains("h:x-trace-id=abc123"), lines::toString);
        assertTrue(lines.contains("h:host=" + backend.hostPort()), lines::toString);
        assertEquals("body=hello sandbox", lines.get(lines.size() - 1));

        assertEquals(1, backend.requestCount());
        SandboxBackend.Recorded recorded = backend.requests().get(0);
        assertEquals("POST", recorded.method());
        assertEquals("/echo?a=1&b=two", recorded.pathAndQuery());
        assertEquals("hello sandbox", recorded.body());
        assertEquals(List.of("abc123"), recorded.headers().get("x-trace-id"));
        // Lookups must not depend on how the sender capitalised the name.
        assertEquals("abc123", recorded.header("X-TRACE-ID"));
        assertNull(recorded.header("x-absent"));

        backend.clearRequests();
        assertEquals(0, backend.requestCount());
        assertTrue(backend.requests().isEmpty());
    }

    @Test
    void unknownPathsNameTheBackendThatServedThem() throws Exception
    {
        ContentResponse asset = client.GET(url("/app/ui.js"));

        assertEquals(200, asset.getStatus());
        assertEquals("backend=s1 path=/app/ui.js", asset.getContentAsString());
        assertEquals("text/plain", asset.getHeaders().get(HttpHeader.CONTENT_TYPE));
        assertEquals("s1", asset.getHeaders().get("X-Backend"));
        assertFalse(asset.getHeaders().contains(HttpHeader.SET_COOKIE));

        ContentResponse root = client.GET(url("/"));
        assertEquals("backend=s1 path=/", root.getContentAsString());
        assertTrue(root.getHeaders().get(HttpHeader.SET_COOKIE).startsWith("backend_cookie=1"));
    }

    @Test
    void statusPathAnswersWithTheRequestedStatus() throws Exception
    {
        ContentResponse response = client.newRequest(url("/status/503")).timeout(5, TimeUnit.SECONDS).send();
        assertEquals(503, response.getStatus());
        assertEquals("status 503", response.getContentAsString());

        ContentResponse noContent = client.newRequest(url("/status/204")).timeout(5, TimeUnit.SECONDS).send();
        assertEquals(204, noContent.getStatus());
        assertEquals("", noContent.getContentAsString());
    }

    @Test
    void bigPathStreamsDeterministicContentWithLength() throws Exception
    {
        client.setMaxConnectionsPerDestination(1);
        int size = 100_003; // deliberately not a multiple of the chunk size or the pattern
        ContentResponse response = client.newRequest(url("/big?bytes=" + size))
                .timeout(5, TimeUnit.SECONDS)
                .send();

        assertEquals(200, response.getStatus());
        assertEquals(size, response.getHeaders().getLongField(HttpHeader.CONTENT_LENGTH));
        byte[] body = response.getContent();
        assertEquals(size, body.length);
        for (int i = 0; i < body.length; i++)
        {
            if (body[i] != '0' + i % 10)
            {
                throw new AssertionError("unexpected byte at offset " + i);
            }
        }
    }

    @Test
    void slowPathDelaysItsAnswer() throws Exception
    {
        long started = System.nanoTime();
        ContentResponse response = client.newRequest(url("/slow?ms=300")).timeout(5, TimeUnit.SECONDS).send();
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);

        assertEquals(200, response.getStatus());
        assertEquals("slow", response.getContentAsString());
        assertTrue(elapsedMillis >= 300, "answered after only " + elapsedMillis + " ms");

        // The use the gateway tests make of it: a client deadline shorter than the delay.
        assertThrows(TimeoutException.class,
                () -> client.newRequest(url("/slow?ms=2000")).timeout(200, TimeUnit.MILLISECONDS).send());
    }

    @Test
    void sseDeliversFirstEventBeforeReleaseAndSecondAfter()
    {
        assertTimeoutPreemptively(Duration.ofSeconds(8), () ->
        {
            InputStreamResponseListener listener = new InputStreamResponseListener();
            client.newRequest(url("/sse")).send(listener);

            Response response = listener.get(5, TimeUnit.SECONDS);
            assertEquals(200, response.getStatus());
            assertTrue(response.getHeaders().get(HttpHeader.CONTENT_TYPE).startsWith("text/event-stream"));

            try (BufferedReader reader = new BufferedReader(
                    new InputStreamReader(listener.getInputStream(), StandardCharsets.UTF_8)))
            {
                // Reading this while the backend is still parked on the latch is the whole point:
                // it proves the event was flushed, not buffered until the response completed.
                assertEquals("data: one", reader.readLine());
                assertEquals("", reader.readLine());

                backend.releaseSecondEvent();

                assertEquals("data: two", reader.readLine());
                assertEquals("", reader.readLine());
                assertNull(reader.readLine(), "stream should end after the second event");
            }
        });
    }

    @Test
    void closeDropsAnSseStreamThatIsStillHeld()
    {
        // A gateway test that kills a pod mid-stream relies on close() being prompt and abrupt.
        assertTimeoutPreemptively(Duration.ofSeconds(5), () ->
        {
            InputStreamResponseListener listener = new InputStreamResponseListener();
            client.newRequest(url("/sse")).send(listener);
            listener.get(5, TimeUnit.SECONDS);
            BufferedReader reader = new BufferedReader(
                    new InputStreamReader(listener.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("data: one", reader.readLine());

            backend.close();

            assertThrows(java.io.IOException.class, () ->
            {
                while (reader.readLine() != null)
                {
                    // drain until the aborted stream surfaces as an error
                }
            });
        });
    }
}
