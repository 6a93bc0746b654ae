package io.sandgate.testing;

import java.io.IOException;
import java.math.BigDecimal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.McpSyncServer;
import io.modelcontextprotocol.server.McpSyncServerExchange;
import io.modelcontextprotocol.server.transport.HttpServletSseServerTransportProvider;
import io.modelcontextprotocol.server.transport.HttpServletStreamableServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema.CallToolRequest;
import io.modelcontextprotocol.spec.McpSchema.CallToolResult;
import io.modelcontextprotocol.spec.McpSchema.Content;
import io.modelcontextprotocol.spec.McpSchema.CreateMessageRequest;
import io.modelcontextprotocol.spec.McpSchema.CreateMessageResult;
import io.modelcontextprotocol.spec.McpSchema.LoggingLevel;
import io.modelcontextprotocol.spec.McpSchema.LoggingMessageNotification;
import io.modelcontextprotocol.spec.McpSchema.ProgressNotification;
import io.modelcontextprotocol.spec.McpSchema.Role;
import io.modelcontextprotocol.spec.McpSchema.SamplingMessage;
import io.modelcontextprotocol.spec.McpSchema.ServerCapabilities;
import io.modelcontextprotocol.spec.McpSchema.TextContent;
import io.modelcontextprotocol.spec.McpSchema.Tool;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * A real MCP server (the official MCP Java SDK) on a real socket, playing the part of one
 * upstream MCP server behind the gateway. One Jetty on {@code 127.0.0.1}, port 0, serves it
 * through both HTTP transports:
 * <ul>
 *   <li>Streamable HTTP (2025-03-26 and later) at {@value #STREAMABLE_PATH}
 *       ({@link HttpServletStreamableServerTransportProvider});</li>
 *   <li>the legacy HTTP+SSE transport (2024-11-05): {@code GET} {@value #SSE_PATH} opens the
 *       stream, whose first {@code endpoint} event names {@value #MESSAGE_PATH}{@code ?sessionId=...}
 *       where the client {@code POST}s ({@link HttpServletSseServerTransportProvider}).</li>
 * </ul>
 * The SDK binds one server object to one transport provider, so there are two
 * {@link McpSyncServer}s with the same tools, sharing the recorded state below. Every
 * {@link Call} says which transport it came through.
 *
 * <p>Tools:
 * <ul>
 *   <li>{@code echo {text}} answers {@code echo: <text>};</li>
 *   <li>{@code add {a, b}} answers the exact decimal sum ({@code 2, 3} gives {@code 5});</li>
 *   <li>{@code ask {question}} sends a sampling {@code sampling/createMessage} request back to the
 *       client (a server-to-client request) and answers {@code client said: <answer text>};</li>
 *   <li>{@code progress {steps}} sends {@code steps} {@code notifications/message} (INFO) and, when
 *       the call carries a {@code progressToken}, {@code steps} {@code notifications/progress}, then
 *       answers {@code done}.</li>
 * </ul>
 *
 * <p>Every HTTP request that reaches the server is recorded ({@link #requests}) before the SDK sees
 * it, so gateway tests can check what was forwarded (paths, {@code Mcp-Session-Id}, {@code Origin},
 * {@code Last-Event-ID}...). The public fields are thread-safe; the SDK calls tools on its own
 * threads.
 */
public final class McpUpstream implements AutoCloseable
{
    public static final String STREAMABLE_PATH = "/mcp";
    public static final String SSE_PATH = "/sse";
    public static final String MESSAGE_PATH = "/message";
    public static final List<String> TOOL_NAMES = List.of("echo", "add", "ask", "progress");

    public static final String TRANSPORT_STREAMABLE = "streamable";
    public static final String TRANSPORT_SSE = "sse";

    /** Bounds server-to-client requests (sampling) so a lost answer fails fast, not in 20 s. */
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);

    /** One {@code tools/call} as the server executed it. */
    public record Call(String transport, String sessionId, String tool, Map<String, Object> arguments)
    {
    }

    /**
     * One HTTP request as it reached the upstream. Header names are lower-case and the map is
     * case-insensitive, as in {@link SandboxBackend.Recorded}.
     */
    public record Seen(String method, String pathAndQuery, Map<String, List<String>> headers)
    {
        public String header(String name)
        {
            List<String> values = headers.get(name);
            return values == null || values.isEmpty() ? null : values.get(0);
        }
    }

    /** Every {@code tools/call}, in the order the handlers ran. */
    public final List<Call> calls = new CopyOnWriteArrayList<>();
    /** Count of {@code tools/call}, any tool, any transport. */
    public final AtomicInteger toolCalls = new AtomicInteger();
    /** Sampling requests the server sent, and the text of the last answer it got back. */
    public final AtomicInteger samplingRequests = new AtomicInteger();
    public final AtomicReference<String> lastSamplingAnswer = new AtomicReference<>();
    /** Logging plus progress notifications the {@code progress} tool sent. */
    public final AtomicInteger notificationsSent = new AtomicInteger();
    /** Every HTTP request that reached the Jetty, any path. */
    public final List<Seen> requests = new CopyOnWriteArrayList<>();
    /** Every {@code Mcp-Session-Id} the Streamable endpoint handed out: one per session it opened. */
    public final Set<String> streamableSessions = ConcurrentHashMap.newKeySet();

    private final Server server;
    private final ServerConnector connector;
    private final HttpServletStreamableServerTransportProvider streamableTransport;
    @SuppressWarnings("deprecation") // the legacy SSE transport is deprecated in SDK 2.x; served on purpose
    private final HttpServletSseServerTransportProvider sseTransport;
    private final McpSyncServer streamableServer;
    private final McpSyncServer sseServer;

    @SuppressWarnings("deprecation") // HttpServletSseServerTransportProvider, see the field
    private McpUpstream()
    {
        server = LoopbackServers.server("mcp-upstream");
        connector = LoopbackServers.connector(server);

        streamableTransport = HttpServletStreamableServerTransportProvider.builder()
                .mcpEndpoint(STREAMABLE_PATH)
                .build();
        sseTransport = HttpServletSseServerTransportProvider.builder()
                .sseEndpoint(SSE_PATH)
                .messageEndpoint(MESSAGE_PATH)
                .build();

        streamableServer = server(McpServer.sync(streamableTransport), TRANSPORT_STREAMABLE);
        sseServer = server(McpServer.sync(sseTransport), TRANSPORT_SSE);

        ServletContextHandler context = new ServletContextHandler("/");
        FilterHolder recorder = new FilterHolder(new RecordingFilter());
        recorder.setAsyncSupported(true);
        context.addFilter(recorder, "/*", EnumSet.of(DispatcherType.REQUEST));
        // Both SDK servlets start async contexts for their SSE streams; they match requests by
        // "request URI ends with the endpoint", so each is mapped on its exact path(s).
        ServletHolder streamable = new ServletHolder("mcp-streamable", streamableTransport);
        streamable.setAsyncSupported(true);
        context.addServlet(streamable, STREAMABLE_PATH);
        ServletHolder sse = new ServletHolder("mcp-sse", sseTransport);
        sse.setAsyncSupported(true);
        context.addServlet(sse, SSE_PATH);
        context.addServlet(sse, MESSAGE_PATH);
        server.setHandler(context);
    }

    public static McpUpstream start()
    {
        McpUpstream upstream = new McpUpstream();
        LoopbackServers.start(upstream.server, upstream::close, "the MCP upstream");
        return upstream;
    }

    public int port()
    {
        return connector.getLocalPort();
    }

    public String hostPort()
    {
        return "127.0.0.1:" + port();
    }

    /** {@code http://127.0.0.1:<port>}, without a trailing slash. */
    public String baseUrl()
    {
        return "http://" + hostPort();
    }

    /** Full URL of the Streamable HTTP endpoint. */
    public String streamableUrl()
    {
        return baseUrl() + STREAMABLE_PATH;
    }

    /** Full URL of the legacy SSE endpoint (the message endpoint is announced by the stream). */
    public String sseUrl()
    {
        return baseUrl() + SSE_PATH;
    }

    /** The calls of one tool, in order. */
    public List<Call> callsOf(String tool)
    {
        List<Call> result = new ArrayList<>();
        for (Call call : calls)
        {
            if (call.tool().equals(tool))
            {
                result.add(call);
            }
        }
        return result;
    }

    /** The recorded requests whose path (without query) is {@code path}. */
    public List<Seen> requestsTo(String path)
    {
        List<Seen> result = new ArrayList<>();
        for (Seen seen : requests)
        {
            String p = seen.pathAndQuery();
            int q = p.indexOf('?');
            if ((q < 0 ? p : p.substring(0, q)).equals(path))
            {
                result.add(seen);
            }
        }
        return result;
    }

    /**
     * Serves a tool under another definition from now on, on both transports, as a server that
     * changes a tool behind its operator's back: the name {@code renamed} (the old one is gone when
     * it differs), the description and the input parameters given. A call answers
     * {@code <renamed>: <first parameter's value>}.
     */
    public void redefine(String name, String renamed, String description, Map<String, String> parameterTypes)
    {
        String first = parameterTypes.keySet().iterator().next();
        for (McpSyncServer s : new McpSyncServer[] {streamableServer, sseServer})
        {
            String transport = s == streamableServer ? TRANSPORT_STREAMABLE : TRANSPORT_SSE;
            s.removeTool(name);
            s.addTool(tool(transport, renamed, description, parameterTypes, (call, args) -> renamed + ": " + args.get(first)));
        }
    }

    /** Forgets what was recorded; counters start again from zero. */
    public void clearRecords()
    {
        calls.clear();
        requests.clear();
        streamableSessions.clear();
        toolCalls.set(0);
        samplingRequests.set(0);
        notificationsSent.set(0);
        lastSamplingAnswer.set(null);
    }

    @Override
    public void close()
    {
        // The servers first: they close their sessions, which completes the SSE async contexts,
        // so stopping Jetty does not have to wait for them.
        RuntimeException failure = null;
        for (McpSyncServer s : new McpSyncServer[] {streamableServer, sseServer})
        {
            try
            {
                if (s != null)
                {
                    s.close();
                }
            }
            catch (RuntimeException e)
            {
                failure = e;
            }
        }
        LoopbackServers.stop(server, "the MCP upstream");
        if (failure != null)
        {
            throw failure;
        }
    }

    /** The same server on either transport; its tools record which one a call came through. */
    private McpSyncServer server(McpServer.SyncSpecification<?> spec, String transport)
    {
        return spec.serverInfo("sandgate-mcp-upstream", "1.0.0")
                .capabilities(capabilities())
                .requestTimeout(REQUEST_TIMEOUT)
                .tools(tools(transport))
                .build();
    }

    private static ServerCapabilities capabilities()
    {
        return ServerCapabilities.builder().tools(true).logging().build();
    }

    private List<SyncToolSpecification> tools(String transport)
    {
        return List.of(
                tool(transport, "echo", "Echoes its text.", Map.of("text", "string"),
                        (call, args) -> "echo: " + args.get("text")),
                tool(transport, "add", "Adds two numbers.", orderedMap("a", "number", "b", "number"),
                        (call, args) -> decimal(args.get("a")).add(decimal(args.get("b")))
                                .stripTrailingZeros().toPlainString()),
                tool(transport, "ask", "Asks the client's model a question (sampling).",
                        Map.of("question", "string"), this::ask),
                tool(transport, "progress", "Sends one logging (and progress) notification per step.",
                        Map.of("steps", "integer"), this::progress));
    }

    @FunctionalInterface
    private interface ToolBody
    {
        String run(ExchangeAndRequest call, Map<String, Object> args);
    }

    private record ExchangeAndRequest(McpSyncServerExchange exchange, CallToolRequest request)
    {
    }

    private SyncToolSpecification tool(String transport, String name, String description,
            Map<String, String> parameterTypes, ToolBody body)
    {
        Map<String, Object> properties = new LinkedHashMap<>();
        parameterTypes.forEach((parameter, type) -> properties.put(parameter, Map.of("type", type)));
        Map<String, Object> inputSchema = new LinkedHashMap<>();
        inputSchema.put("type", "object");
        inputSchema.put("properties", properties);
        inputSchema.put("required", List.copyOf(parameterTypes.keySet()));
        Tool tool = Tool.builder(name, inputSchema).description(description).build();
        return SyncToolSpecification.builder()
                .tool(tool)
                .callHandler((exchange, request) ->
                {
                    Map<String, Object> args = request.arguments() == null ? Map.of() : request.arguments();
                    toolCalls.incrementAndGet();
                    calls.add(new Call(transport, exchange.sessionId(), name,
                            Collections.unmodifiableMap(new LinkedHashMap<>(args))));
                    try
                    {
                        String text = body.run(new ExchangeAndRequest(exchange, request), args);
                        return CallToolResult.builder().addTextContent(text).isError(false).build();
                    }
                    catch (RuntimeException e)
                    {
                        return CallToolResult.builder().addTextContent(name + " failed: " + e)
                                .isError(true).build();
                    }
                })
                .build();
    }

    private String ask(ExchangeAndRequest call, Map<String, Object> args)
    {
        String question = String.valueOf(args.get("question"));
        samplingRequests.incrementAndGet();
        CreateMessageResult answer = call.exchange().createMessage(CreateMessageRequest.builder(
                List.of(new SamplingMessage(Role.USER, TextContent.builder(question).build())), 64)
                .build());
        String text = text(answer.content());
        lastSamplingAnswer.set(text);
        return "client said: " + text;
    }

    private String progress(ExchangeAndRequest call, Map<String, Object> args)
    {
        int steps = decimal(args.get("steps")).intValueExact();
        Object token = call.request().progressToken();
        for (int i = 1; i <= steps; i++)
        {
            call.exchange().loggingNotification(LoggingMessageNotification
                    .builder(LoggingLevel.INFO, "step " + i + "/" + steps)
                    .logger("mcp-upstream")
                    .build());
            notificationsSent.incrementAndGet();
            if (token != null)
            {
                call.exchange().progressNotification(ProgressNotification.builder(token, i)
                        .total((double) steps)
                        .message("step " + i)
                        .build());
                notificationsSent.incrementAndGet();
            }
        }
        return "done";
    }

    private static String text(Content content)
    {
        return content instanceof TextContent text ? text.text() : String.valueOf(content);
    }

    private static BigDecimal decimal(Object value)
    {
        if (value == null)
        {
            throw new IllegalArgumentException("missing number");
        }
        return new BigDecimal(value.toString());
    }

    private static Map<String, String> orderedMap(String k1, String v1, String k2, String v2)
    {
        Map<String, String> map = new LinkedHashMap<>();
        map.put(k1, v1);
        map.put(k2, v2);
        return map;
    }

    /** Records each request before the SDK servlets see it. */
    private final class RecordingFilter implements Filter
    {
        @Override
        public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
                throws IOException, ServletException
        {
            HttpServletRequest http = (HttpServletRequest) req;
            String query = http.getQueryString();
            Map<String, List<String>> headers = new TreeMap<>(String.CASE_INSENSITIVE_ORDER);
            for (String name : Collections.list(http.getHeaderNames()))
            {
                headers.put(name.toLowerCase(Locale.ROOT),
                        List.copyOf(Collections.list(http.getHeaders(name))));
            }
            requests.add(new Seen(http.getMethod(),
                    http.getRequestURI() + (query == null ? "" : "?" + query),
                    Collections.unmodifiableMap(headers)));
            chain.doFilter(req, res);
            // The SDK answers initialize at once, naming the session it opened.
            String session = ((HttpServletResponse) res).getHeader("Mcp-Session-Id");
            if (session != null && STREAMABLE_PATH.equals(http.getRequestURI()))
            {
                streamableSessions.add(session);
            }
        }
    }
}
