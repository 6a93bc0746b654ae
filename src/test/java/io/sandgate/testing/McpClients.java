package io.sandgate.testing;

import java.net.URI;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpSyncClient;
import io.modelcontextprotocol.client.transport.HttpClientSseClientTransport;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.customizer.McpSyncHttpClientRequestCustomizer;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.ClientCapabilities;
import io.modelcontextprotocol.spec.McpSchema.Content;
import io.modelcontextprotocol.spec.McpSchema.CreateMessageRequest;
import io.modelcontextprotocol.spec.McpSchema.CreateMessageResult;
import io.modelcontextprotocol.spec.McpSchema.Implementation;
import io.modelcontextprotocol.spec.McpSchema.LoggingMessageNotification;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import io.modelcontextprotocol.spec.McpSchema.Role;
import io.modelcontextprotocol.spec.McpSchema.SamplingMessage;
import io.modelcontextprotocol.spec.McpSchema.TextContent;

/**
 * MCP clients of the official Java SDK (sync API), for tests that talk MCP to {@link McpUpstream}
 * directly or to the gateway's MCP face.
 *
 * <p>{@code baseUrl} is {@code http://host:port}, optionally with a path prefix;
 * {@code endpointPath} is appended to that path (a leading {@code /} is added if missing), so
 * {@code streamable(gateway, "/mcp/alpha/mcp")} and {@code sse(gateway, "/mcp/alpha/sse")} reach
 * the gateway's per-server routes. The SSE client then posts to whatever the stream's
 * {@code endpoint} event names (e.g. {@code /mcp/alpha/message?sessionId=...}): the SDK resolves
 * it against the origin and rejects other origins and {@code ..} segments.
 *
 * <p>The clients are built but not initialized: call {@link McpSyncClient#initialize()} (a test
 * may expect it to fail), and close them, preferably with {@link McpSyncClient#closeGracefully()}
 * while the server is still up ({@code close()} sends the Streamable {@code DELETE} in the
 * background, and the SDK logs a WARN if the server is already gone). Notifications reach the
 * consumers on SDK threads and not necessarily in wire order. They declare the sampling capability and answer every
 * sampling request with {@link Options#samplingAnswer} ({@value #SAMPLING_ANSWER} by default);
 * what they received (logging and progress notifications, sampling questions) lands in
 * {@link Options#received()}. {@link Options#header} adds a header to every HTTP request the
 * transport makes (the SSE {@code GET}, the {@code POST}s, the Streamable {@code GET} and
 * {@code DELETE}); the JDK HttpClient refuses restricted headers such as {@code Host}.
 */
public final class McpClients
{
    public static final String SAMPLING_ANSWER = "forty-two";
    public static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    private McpClients()
    {
    }

    /** What a client received from its server; thread-safe, filled on SDK threads. */
    public static final class Received
    {
        public final List<LoggingMessageNotification> logs = new CopyOnWriteArrayList<>();
        public final List<ProgressNotification> progress = new CopyOnWriteArrayList<>();
        /** The text of each sampling request's last message, in arrival order. */
        public final List<String> samplingQuestions = new CopyOnWriteArrayList<>();
    }

    /** Per-client settings; {@link #options()} gives the defaults. */
    public static final class Options
    {
        private final Map<String, String> headers = new LinkedHashMap<>();
        private final Received received = new Received();
        private String samplingAnswer = SAMPLING_ANSWER;
        private Duration requestTimeout = REQUEST_TIMEOUT;
        private boolean resumableStreams = true;

        private Options()
        {
        }

        /** Sends this header (e.g. {@code Origin}) on every request of the transport. */
        public Options header(String name, String value)
        {
            headers.put(name, value);
            return this;
        }

        public Options samplingAnswer(String answer)
        {
            this.samplingAnswer = answer;
            return this;
        }

        /** Timeout of each client request (initialize, tools/call...). */
        public Options requestTimeout(Duration timeout)
        {
            this.requestTimeout = timeout;
            return this;
        }

        /**
         * Streamable HTTP only: whether the SDK reconnects a broken SSE stream with
         * {@code GET} and {@code Last-Event-ID} (the SDK's default is true).
         */
        public Options resumableStreams(boolean resumable)
        {
            this.resumableStreams = resumable;
            return this;
        }

        public Received received()
        {
            return received;
        }

        public Map<String, String> headers()
        {
            return Map.copyOf(headers);
        }
    }

    public static Options options()
    {
        return new Options();
    }

    /** A Streamable HTTP client of {@code baseUrl + endpointPath} (e.g. {@code /mcp}). */
    public static McpSyncClient streamable(String baseUrl, String endpointPath)
    {
        return streamable(baseUrl, endpointPath, options());
    }

    public static McpSyncClient streamable(String baseUrl, String endpointPath, Options options)
    {
        Target target = Target.of(baseUrl, endpointPath);
        HttpClientStreamableHttpTransport.Builder transport = HttpClientStreamableHttpTransport
                .builder(target.origin())
                .endpoint(target.path())
                .resumableStreams(options.resumableStreams)
                .connectTimeout(Duration.ofSeconds(5));
        if (!options.headers.isEmpty())
        {
            transport.addHttpRequestCustomizer(headers(options.headers));
        }
        return client(transport.build(), options);
    }

    /** A legacy HTTP+SSE client whose stream is {@code GET baseUrl + sseEndpointPath}. */
    public static McpSyncClient sse(String baseUrl, String sseEndpointPath)
    {
        return sse(baseUrl, sseEndpointPath, options());
    }

    @SuppressWarnings("deprecation") // the legacy SSE client transport is deprecated in SDK 2.x
    public static McpSyncClient sse(String baseUrl, String sseEndpointPath, Options options)
    {
        Target target = Target.of(baseUrl, sseEndpointPath);
        HttpClientSseClientTransport.Builder transport = HttpClientSseClientTransport
                .builder(target.origin())
                .sseEndpoint(target.path())
                .connectTimeout(Duration.ofSeconds(5));
        if (!options.headers.isEmpty())
        {
            transport.addHttpRequestCustomizer(headers(options.headers));
        }
        return client(transport.build(), options);
    }

    /** Calls a tool and returns the result. */
    public static CallToolResult call(McpSyncClient client, String tool, Map<String, Object> arguments)
    {
        return client.callTool(CallToolRequest.builder(tool).arguments(arguments).build());
    }

    /** Calls a tool with a {@code progressToken}, so the server may send progress notifications. */
    public static CallToolResult callWithProgress(McpSyncClient client, String tool,
            Map<String, Object> arguments, Object progressToken)
    {
        return client.callTool(CallToolRequest.builder(tool)
                .arguments(arguments)
                .progressToken(progressToken)
                .build());
    }

    /** The text of the result's text contents, joined with newlines. */
    public static String text(CallToolResult result)
    {
        StringBuilder text = new StringBuilder();
        for (Content content : result.content())
        {
            if (content instanceof TextContent t)
            {
                if (text.length() > 0)
                {
                    text.append('\n');
                }
                text.append(t.text());
            }
        }
        return text.toString();
    }

    private static McpSyncClient client(McpClientTransport transport, Options options)
    {
        Received received = options.received;
        String answer = options.samplingAnswer;
        return McpClient.sync(transport)
                .clientInfo(Implementation.builder("sandgate-test-client", "1.0.0").build())
                .requestTimeout(options.requestTimeout)
                .initializationTimeout(options.requestTimeout)
                .capabilities(ClientCapabilities.builder().sampling().build())
                .sampling(request ->
                {
                    received.samplingQuestions.add(lastText(request));
                    return CreateMessageResult.builder(Role.ASSISTANT, answer, "sandgate-test-model")
                            .stopReason(CreateMessageResult.StopReason.END_TURN)
                            .build();
                })
                .loggingConsumer(received.logs::add)
                .progressConsumer(received.progress::add)
                .build();
    }

    private static String lastText(CreateMessageRequest request)
    {
        List<SamplingMessage> messages = request.messages();
        if (messages == null || messages.isEmpty())
        {
            return "";
        }
        Content content = messages.get(messages.size() - 1).content();
        return content instanceof TextContent t ? t.text() : String.valueOf(content);
    }

    private static McpSyncHttpClientRequestCustomizer headers(Map<String, String> headers)
    {
        Map<String, String> copy = Map.copyOf(headers);
        return (builder, method, uri, body, context) -> copy.forEach(builder::header);
    }

    /**
     * The SDK resolves the endpoint with {@code URI.resolve} against the base URI, which drops a
     * base path and mangles a relative endpoint; so the base is reduced to its origin and any
     * base path moves into the endpoint.
     */
    private record Target(String origin, String path)
    {
        static Target of(String baseUrl, String endpointPath)
        {
            URI base = URI.create(baseUrl);
            if (base.getScheme() == null || base.getRawAuthority() == null)
            {
                throw new IllegalArgumentException("baseUrl must be absolute: " + baseUrl);
            }
            String prefix = base.getRawPath() == null ? "" : base.getRawPath();
            while (prefix.endsWith("/"))
            {
                prefix = prefix.substring(0, prefix.length() - 1);
            }
            String endpoint = endpointPath.startsWith("/") ? endpointPath : "/" + endpointPath;
            return new Target(base.getScheme() + "://" + base.getRawAuthority(), prefix + endpoint);
        }
    }
}
