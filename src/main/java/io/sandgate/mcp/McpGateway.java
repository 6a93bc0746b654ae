package io.sandgate.mcp;

import java.time.Clock;
import java.util.List;
import java.util.function.Function;
import java.util.function.BooleanSupplier;

import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.config.McpConfig;
import io.sandgate.core.Schedulers;
import io.sandgate.core.Secret;
import io.sandgate.mcp.identity.Authenticator;
import io.sandgate.mcp.identity.ResourceMetadataServlet;
import io.sandgate.mcp.identity.UpstreamCredentials;
import io.sandgate.net.Origins;
import io.sandgate.tracing.Tracing;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.ClientThreads;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.http.HttpCookieStore;

/**
 * The MCP face, put together once: the HTTP client towards upstream servers, the
 * {@link RequestChecks} every request passes, the {@link SessionRelay} between upstreams and the
 * session log, and the client streams this replica holds. Each part gets its collaborators here;
 * {@link #servlet} wires them into the servlet glue.
 */
public final class McpGateway implements AutoCloseable
{
    /** Concurrent exchanges with one upstream MCP server. */
    private static final int MAX_UPSTREAM_CONNECTIONS = 1024;

    private final McpConfig config;
    private final SessionBus bus;
    private final ClientInfo clients;
    private final Schedulers schedulers;
    private final HttpClient http;
    private final Upstream upstream;
    private final ClientStreams streams;
    private final RequestChecks checks;
    private final SessionRelay relay;
    private final Authenticator authenticator;
    private final CallGate gate;
    private final ToolPins pins;
    private final MeterRegistry registry;
    private final Clock clock;

    /**
     * @param origins the browser origins the deployment allows ({@code server.public-origins}); the
     *        face adds {@code mcp.allowed-origins}
     * @param tracing where the spans of messages delivered on this replica go
     * @param quotas the tool-call counters the replicas share
     * @param pinStore the pinned tool definitions the replicas share
     * @param secrets the gateway's secrets by name: upstream credentials, introspection and token-exchange client secrets
     */
    public McpGateway(McpConfig config, SessionBus bus, ClientInfo clients, Origins origins, MeterRegistry registry, Schedulers schedulers,
                      Tracing tracing, CallQuotas quotas, ToolPinStore pinStore, Function<String, Secret> secrets, Clock clock) throws Exception
    {
        this.config = config;
        this.registry = registry;
        this.clock = clock;
        this.bus = bus;
        this.clients = clients;
        this.schedulers = schedulers;
        this.http = new HttpClient();
        // Jetty's default pool would keep eight threads on every replica, MCP servers configured or not.
        ClientThreads.install(http, "sandgate-mcp-client");
        // Must not store cookies, or sessions of different clients would share them.
        http.setHttpCookieStore(new HttpCookieStore.Empty());
        http.setFollowRedirects(false);
        http.setConnectTimeout(5000);
        // Each relayed call that the upstream answers slowly holds a connection (HTTP/1.1), not a
        // thread: Jetty's default of 64 per destination would queue the 65th tool call behind them.
        http.setMaxConnectionsPerDestination(MAX_UPSTREAM_CONNECTIONS);
        http.start();
        this.authenticator = new Authenticator(config, secrets, clock, registry, schedulers.workers());
        UpstreamCredentials credentials = new UpstreamCredentials(secrets, clock, registry);
        this.upstream = new Upstream(http, schedulers.timer(), credentials);
        this.streams = new ClientStreams(config, registry, schedulers);
        this.pins = new ToolPins(config, pinStore, schedulers, registry, clock);
        this.checks = new RequestChecks(config, bus, clients, origins, streams, registry, authenticator, credentials, pins);
        this.gate = new CallGate(quotas, registry, config.principalLabel(), clock, schedulers.workers());
        this.relay = new SessionRelay(bus, schedulers, tracing, registry, pins);
    }

    /** The face's servlet glue, to map at {@code /mcp/*}. */
    public McpServlet servlet()
    {
        UpstreamStreams upstreams = new UpstreamStreams(upstream, relay, schedulers);
        StatelessBridge bridge = new StatelessBridge(bus, upstream);
        LegacySseTransport sse = new LegacySseTransport(checks, relay, bus, upstream, upstreams, bridge, gate);
        StreamableTransport streamable = new StreamableTransport(checks, relay, bus, upstream, upstreams, bridge,
            new StatelessTransport(upstream, gate), new SseBridge(checks, relay, bus, upstream, upstreams), gate);
        FederationMembers members = new FederationMembers(config, bus, upstream, bridge, new SseMembers(bus, upstream, upstreams, schedulers.timer()), registry);
        FederatedLists lists = new FederatedLists(members);
        FederatedTransport federated = new FederatedTransport(config, checks, bus, members, lists, new FederatedCalls(members, lists, gate, schedulers.workers()),
            new FederatedStream(checks, bus, relay, upstreams, members), new StatelessMembers(config, bus, upstream, members, clock), schedulers.workers());
        return new McpServlet(checks, clients, config.maxBodySize(), sse, streamable, federated);
    }

    /**
     * The protected-resource metadata of the servers that authenticate, to map at
     * {@value Authenticator#METADATA_PATH}{@code /*}; null when none does.
     */
    public ResourceMetadataServlet metadataServlet()
    {
        return authenticator.any() ? new ResourceMetadataServlet(config, authenticator) : null;
    }

    /** The servers' pinned tool definitions, for the admin API. */
    public ToolPins pins()
    {
        return pins;
    }

    /** Client streams this replica holds, ending ones included: a drain waits until there are none. */
    public int openStreams()
    {
        return streams.size();
    }

    /**
     * One action per client stream still running, each ending it; its client resumes on another
     * replica with {@code Last-Event-ID}, the session living on in the store. A drain spreads them.
     */
    public List<BooleanSupplier> streamEndings()
    {
        return streams.endings();
    }

    /** Closes every client stream this replica holds; their sessions live on in the store. */
    public void endStreams()
    {
        streams.closeAll();
    }

    @Override
    public void close() throws Exception
    {
        streams.closeAll();
        pins.close();
        authenticator.close();
        // Stopping the client ends the upstream streams' reads.
        http.stop();
    }
}
