package io.sandgate.mcp;

import java.io.IOException;

import io.sandgate.config.McpConfig;
import io.sandgate.config.McpFederation;
import io.sandgate.mcp.federation.FederatedNames;
import io.sandgate.mcp.federation.MemberMessages;
import io.sandgate.mcp.federation.ResumeIds;
import io.sandgate.web.GatewayException;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.http.HttpServletRequest;
import org.eclipse.jetty.http.HttpStatus;

/**
 * The GET stream of a federated session. It reads the federated session's log, as a single
 * server's GET stream reads its session's, so that event ids and {@code Last-Event-ID} resume on
 * any replica work alike; the replica holding it holds each open member's own GET stream and puts
 * what the members send there (a {@code list_changed}, a request not tied to a call) into that
 * log, rewritten for the federation's client ({@link MemberMessages}).
 */
final class FederatedStream
{
    private final RequestChecks checks;
    private final SessionBus bus;
    private final SessionRelay relay;
    private final UpstreamStreams upstreams;
    private final FederationMembers members;

    FederatedStream(RequestChecks checks, SessionBus bus, SessionRelay relay, UpstreamStreams upstreams, FederationMembers members)
    {
        this.checks = checks;
        this.bus = bus;
        this.relay = relay;
        this.upstreams = upstreams;
        this.members = members;
    }

    void get(HttpServletRequest request, McpFederation federation, FederatedNames names, RequestChecks.Caller caller) throws IOException
    {
        StreamableTransport.checkVersion(request);
        String sessionId = request.getHeader(McpHeaders.SESSION_ID);
        if (sessionId == null)
            throw new GatewayException(HttpStatus.METHOD_NOT_ALLOWED_405, "method_not_allowed", "GET needs an Mcp-Session-Id");
        McpSession federated = checks.session(sessionId, federation.name(), caller);
        ClientStreams.Place place = checks.reserveStream(caller, McpServlet.streamOpened(request));
        try
        {
            open(request, federation, names, federated, place);
        }
        catch (IOException | RuntimeException x)
        {
            place.cancel();
            throw x;
        }
    }

    private void open(HttpServletRequest request, McpFederation federation, FederatedNames names, McpSession federated, ClientStreams.Place place) throws IOException
    {
        String lastEventId = request.getHeader(McpHeaders.LAST_EVENT_ID);
        if (lastEventId != null)
            relay.resumed();
        // Only the federated log can be resumed: an id that is not its own starts with what comes next.
        String after = lastEventId != null && bus.isEventId(lastEventId) ? lastEventId : bus.lastEventId(federated.id());
        AsyncContext async = request.startAsync();
        async.setTimeout(0);
        ClientStream stream = ClientStream.start(async);
        place.open(stream);
        // No member's response reaches this log (MemberMessages drops them on GET streams), so no
        // tools/list answer is in it for a member's policy to cut.
        SessionBus.Subscription subscription = relay.subscribe(federated.id(), after, new ClientStream.Delivery(stream, ToolAccess.of(McpConfig.ToolPolicy.ALL))
        {
            @Override
            void deliver(String eventId, String message) throws IOException
            {
                stream.event(eventId, null, message);
            }
        });
        stream.onClose(subscription::close);
        // A member's own event id under its prefix (FederatedCalls): the client resumes a POST answer
        // the member cut short (SSE polling), which only the member can replay, on its GET stream.
        FederatedNames.Routed routed = lastEventId != null && !bus.isEventId(lastEventId) ? names.route(lastEventId).orElse(null) : null;
        ResumeIds.Resumed resumed = routed == null ? null : ResumeIds.parse(routed.name()).orElse(null);
        for (String member : federation.servers())
        {
            McpConfig.Server server = members.server(member);
            if (server.transport() != McpConfig.Transport.STREAMABLE)
                continue;
            boolean resuming = resumed != null && routed.member().equals(member);
            String resumeAfter = resuming ? resumed.memberEventId() : null;
            members.find(federated, member).ifPresent(session ->
            {
                MemberMessages.Answering answering = resuming ? resumed.answering() : MemberMessages.Answering.NOTHING;
                upstreams.holdGet(server, session, stream, federated.id(), message -> MemberMessages.toClient(names, member, message, answering), resumeAfter);
            });
        }
    }
}
