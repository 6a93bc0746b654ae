package io.sandgate.mcp;

import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.config.McpConfig;
import io.sandgate.mcp.identity.Authenticator;
import io.sandgate.mcp.identity.UpstreamCredentials;
import io.sandgate.core.Schedulers;
import io.sandgate.net.Origins;
import io.sandgate.web.ClientInfo;
import io.sandgate.web.GatewayException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The MCP face's decisions about a request, made from the values the servlet glue reads, without a server. */
class RequestChecksTest
{
    private static final McpConfig.Server TOOLS = new McpConfig.Server("tools", URI.create("http://127.0.0.1:9/mcp"), McpConfig.Transport.STREAMABLE);
    private static final McpConfig.Server OTHER = new McpConfig.Server("other", URI.create("http://127.0.0.1:9/mcp"), McpConfig.Transport.STREAMABLE);
    private static final int MAX_SESSIONS = 2;
    private static final int MAX_STREAMS = 1;

    private final Schedulers schedulers = Schedulers.create();
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final MemorySessionBus bus = new MemorySessionBus(Duration.ofMinutes(1), 100, 1 << 20, 1 << 22, schedulers);
    private final McpConfig config = new McpConfig(List.of(TOOLS, OTHER), Duration.ofSeconds(15), Duration.ofMinutes(1), 100, 1 << 20, 1 << 22, 1 << 20,
        MAX_SESSIONS, MAX_STREAMS, List.of("https://ide.example"), false);
    private final ClientStreams streams = new ClientStreams(config, registry, schedulers);
    private final RequestChecks checks = new RequestChecks(config, bus, new ClientInfo(List.of()), new Origins(List.of("https://app.example")), streams, registry,
        new Authenticator(config, name -> null, Clock.systemUTC(), registry, Runnable::run), new UpstreamCredentials(name -> null, Clock.systemUTC(), registry), null);

    @AfterEach
    void close()
    {
        bus.close();
        schedulers.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"https://app.example", "https://ide.example", "http://localhost:6274", "http://127.0.0.1:3000"})
    void origin_ofTheDeployment_theFace_orLoopback_passes(String origin)
    {
        assertDoesNotThrow(() -> checks.checkOrigin(origin));
    }

    @Test
    void noOrigin_passes_asClientsThatAreNotBrowsersSendNone()
    {
        assertDoesNotThrow(() -> checks.checkOrigin(null));
    }

    @Test
    void anyOtherOrigin_isForbidden_evenOneThatLooksLikeTheGatewaysHost()
    {
        GatewayException refused = assertThrows(GatewayException.class, () -> checks.checkOrigin("http://rebound.example:8080"));
        assertEquals(403, refused.status());
        assertTrue(refused.getMessage().contains("mcp.allowed-origins"), refused.getMessage());
    }

    @Test
    void server_namedInThePath_isFound_andAnUnknownOneIs404()
    {
        assertEquals(TOOLS, checks.server("tools"));
        assertEquals(404, assertThrows(GatewayException.class, () -> checks.server("nope")).status());
    }

    @Test
    void caller_withACredential_isOwnedByItsDigest_neverByTheCredential()
    {
        RequestChecks.Caller caller = checks.caller("Bearer s3cret-token", "192.0.2.7");
        assertTrue(caller.owner().matches("credential:[0-9a-f]{64}"), caller.owner());
        assertFalse(caller.toString().contains("s3cret"), caller.toString());
        assertEquals(caller.owner(), checks.caller("Bearer s3cret-token", "198.51.100.1").owner(), "the credential, not the address, owns");
        assertNotEquals(caller.owner(), checks.caller("Bearer other", "192.0.2.7").owner());
        assertEquals("192.0.2.7", caller.limitKey(), "limits count by address, whatever the credential");
    }

    @Test
    void caller_withoutACredential_isOwnedByItsAddress_andIPv6CountsByItsNetwork()
    {
        assertEquals("address:192.0.2.7", checks.caller(null, "192.0.2.7").owner());
        RequestChecks.Caller one = checks.caller(null, "2001:db8::1");
        RequestChecks.Caller two = checks.caller(null, "2001:db8::2");
        assertNotEquals(one.owner(), two.owner(), "each address owns its own sessions");
        assertEquals(one.limitKey(), two.limitKey(), "one /64 is one client to the limits");
    }

    @Test
    void session_isFound_forItsOwner_onItsServer_andRenewed()
    {
        RequestChecks.Caller owner = checks.caller("Bearer a", "192.0.2.7");
        McpSession session = checks.newSession(TOOLS, owner);
        assertEquals(session, checks.session(session.id(), TOOLS, owner));
        assertEquals(session, checks.session(session.id(), TOOLS, checks.caller("Bearer a", "198.51.100.1")), "the credential goes where its owner goes");
    }

    @Test
    void session_ofAnotherCredential_answersAsUnknown_andIsCounted()
    {
        McpSession session = checks.newSession(TOOLS, checks.caller("Bearer a", "192.0.2.7"));
        GatewayException refused = assertThrows(GatewayException.class, () -> checks.session(session.id(), TOOLS, checks.caller("Bearer b", "192.0.2.7")));
        assertUnknown(refused);
        assertEquals(1, registry.counter("sandgate.mcp.sessions.foreign").count());

        assertUnknown(assertThrows(GatewayException.class, () -> checks.session(session.id(), TOOLS, checks.caller(null, "192.0.2.7"))));
    }

    @Test
    void session_madeWithoutACredential_opensOnlyFromItsAddress()
    {
        McpSession session = checks.newSession(TOOLS, checks.caller(null, "192.0.2.7"));
        assertEquals(session, checks.session(session.id(), TOOLS, checks.caller(null, "192.0.2.7")));
        assertUnknown(assertThrows(GatewayException.class, () -> checks.session(session.id(), TOOLS, checks.caller(null, "192.0.2.8"))));
    }

    @Test
    void session_ofAnotherServer_malformed_orUnknown_answersAsUnknown()
    {
        RequestChecks.Caller owner = checks.caller("Bearer a", "192.0.2.7");
        McpSession session = checks.newSession(TOOLS, owner);
        assertUnknown(assertThrows(GatewayException.class, () -> checks.session(session.id(), OTHER, owner)));
        assertUnknown(assertThrows(GatewayException.class, () -> checks.session(null, TOOLS, owner)));
        assertUnknown(assertThrows(GatewayException.class, () -> checks.session("../" + session.id(), TOOLS, owner)));
        assertUnknown(assertThrows(GatewayException.class, () -> checks.session(McpSession.newId(), TOOLS, owner)));
        assertEquals(0, registry.counter("sandgate.mcp.sessions.foreign").count(), "only another owner's session counts as foreign");
    }

    @Test
    void newSession_pastTheClientsCap_is429_countedByAddress_notByCredential()
    {
        checks.newSession(TOOLS, checks.caller("Bearer a", "192.0.2.7"));
        checks.newSession(OTHER, checks.caller("Bearer b", "192.0.2.7"));
        GatewayException refused = assertThrows(GatewayException.class, () -> checks.newSession(TOOLS, checks.caller("Bearer c", "192.0.2.7")));
        assertEquals(429, refused.status());
        assertEquals("too_many_sessions", refused.code());
        assertEquals(1, registry.counter("sandgate.mcp.sessions.refused").count());

        assertDoesNotThrow(() -> checks.newSession(TOOLS, checks.caller("Bearer c", "192.0.2.8")), "another client has caps of its own");
    }

    @Test
    void newSession_afterOneEnded_fitsAgain()
    {
        RequestChecks.Caller caller = checks.caller(null, "192.0.2.7");
        McpSession first = checks.newSession(TOOLS, caller);
        checks.newSession(TOOLS, caller);
        bus.delete(first.id());
        assertDoesNotThrow(() -> checks.newSession(TOOLS, caller));
    }

    @Test
    void reserveStream_pastTheClientsCap_is429_untilThePlaceIsGivenBack()
    {
        AtomicInteger opened = new AtomicInteger();
        RequestChecks.Caller caller = checks.caller("Bearer a", "192.0.2.7");
        ClientStreams.Place place = checks.reserveStream(caller, opened::incrementAndGet);

        GatewayException refused = assertThrows(GatewayException.class, () -> checks.reserveStream(checks.caller("Bearer b", "192.0.2.7"), opened::incrementAndGet));
        assertEquals(429, refused.status());
        assertEquals("too_many_streams", refused.code());
        assertDoesNotThrow(() -> checks.reserveStream(checks.caller(null, "192.0.2.8"), opened::incrementAndGet).cancel(), "another client's place");

        place.cancel();
        place.cancel();
        assertDoesNotThrow(() -> checks.reserveStream(caller, opened::incrementAndGet), "given back once, however often cancelled");
        assertEquals(0, opened.get(), "no stream started");
    }

    private static void assertUnknown(GatewayException refused)
    {
        assertEquals(404, refused.status());
        assertEquals(JsonRpcErrors.UNKNOWN_SESSION, refused.code());
    }
}
