package io.sandgate.launcher;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import io.micrometer.core.instrument.MeterRegistry;
import io.sandgate.testing.GatewayExtension;
import io.sandgate.testing.RawHttp;
import io.sandgate.testing.RunningGateway;
import io.sandgate.testing.SandboxBackend;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The listeners' connections together stay under {@code server.max-connections}, and a client that
 * opens many, from many addresses each under its own cap, cannot shut a new one out: at the cap the
 * connections that have waited longest on their clients (idle, or trickling a head) are closed to
 * admit it, never one that is served. A head that does not come whole within
 * {@code server.head-timeout} of its first byte is closed, however steadily it trickles, on the
 * gateway's own browser connection and on Jetty's.
 *
 * <p>The attack it stands for: 21 000 idle connections from 21 loopback addresses, 1 000 each, took
 * all of a gateway's 20 000 file descriptors, and for as long as they stayed (one byte of a head a
 * minute keeps a connection from its idle timeout) no one else, health checks included, could
 * connect. Here with a cap of a few hundred, on real sockets bound to addresses of 127.0.0.0/8.</p>
 */
class ServerConnectionLimitIT
{
    private static final int CAP = 300;
    /** Each address opens this many of each kind, under its own cap of 100. */
    private static final int EACH = 30;
    private static final List<String> ATTACKERS = List.of("127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5", "127.0.0.6");
    private static final String HEAD = "GET /vnc/1/ HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";

    @AutoClose
    private static SandboxBackend sandbox;

    @RegisterExtension
    static final GatewayExtension gateway = new GatewayExtension(config -> config
        .set("server.internal-port", "0")
        .set("server.max-connections", Integer.toString(CAP))
        .set("server.max-connections-per-client", "100")
        .set("ingress.static-routes", Map.of("1", sandbox.hostPort())));

    private final List<Socket> held = new ArrayList<>();

    @BeforeAll
    static void start()
    {
        sandbox = SandboxBackend.start("s1");
    }

    @AfterEach
    void closeHeld() throws IOException
    {
        for (Socket socket : held)
            socket.close();
    }

    @Test
    void idleAndTricklingConnectionsAboveTheCap_fromSeveralAddresses_leaveRoomForAFreshClient() throws Exception
    {
        // A stream being served, which no admission may close.
        Socket streaming = open("127.0.0.10", gateway.port());
        streaming.getOutputStream().write("GET /vnc/1/sse HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
        String firstEvent = readUntil(streaming.getInputStream(), "one");
        assertTrue(firstEvent.startsWith("HTTP/1.1 200"), firstEvent);

        // Heads trickled first, so that theirs are the longest waits; then connections answered
        // once and kept; then connections that send nothing. Half as many again as the cap.
        List<Socket> trickling = new ArrayList<>();
        for (String address : ATTACKERS)
        {
            for (int i = 0; i < EACH; i++)
                trickling.add(attack(address, HEAD));
        }
        for (String address : ATTACKERS)
        {
            for (int i = 0; i < EACH; i++)
            {
                Socket kept = attack(address, "GET /vnc/1/kept HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
                readQuietly(kept, "path=/kept");
            }
        }
        for (String address : ATTACKERS)
        {
            for (int i = 0; i < EACH; i++)
                attack(address, "");
        }
        // The heads go on trickling, a byte each.
        for (Socket socket : trickling)
            writeQuietly(socket, "a");

        // Now a client no one has heard of, from an address of its own.
        long start = System.nanoTime();
        try (Socket fresh = open("127.0.0.9", gateway.port()))
        {
            fresh.setSoTimeout(2000);
            fresh.getOutputStream().write("GET /vnc/1/page HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
            RawHttp.Response page = RawHttp.read(fresh.getInputStream());
            assertEquals(200, page.status());
            assertTrue(page.body().contains("backend=s1"), page.body());
        }
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(took.compareTo(Duration.ofSeconds(2)) < 0, "the page took " + took);

        MeterRegistry metrics = gateway.sandgate().metrics();
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() ->
            assertTrue(metrics.get("sandgate.connections.counted").gauge().value() <= CAP, "connections open past the cap"));
        assertTrue(metrics.get("sandgate.connections.open").gauge().value() <= CAP);
        assertTrue(metrics.get("sandgate.connections.evicted").counter().count() >= 3.0 * ATTACKERS.size() * EACH - CAP,
            "the connections past the cap made room by closing others");
        // The trickled heads waited longest: the gateway closed them.
        await().atMost(Duration.ofSeconds(10)).until(() -> trickling.stream().filter(ServerConnectionLimitIT::closedByGateway).count() >= EACH);
        // The stream being served was not closed: it gets its second event.
        sandbox.releaseSecondEvent();
        assertTrue(readUntil(streaming.getInputStream(), "two").contains("two"));
    }

    /**
     * A connection between two requests is one the cap may close, on the gateway's own browser
     * connection (public listener) as on Jetty's (internal listener): its client loses no request,
     * and sends the next on a new connection. The one idle longest goes first.
     */
    @ParameterizedTest
    @ValueSource(strings = {"public", "internal"})
    void connectionsBetweenRequests_makeRoomAtTheCap_longestIdleFirst(String listener) throws Exception
    {
        int cap = 16;
        try (RunningGateway capped = gateway.startAnother(config -> config.set("server.max-connections", Integer.toString(cap))))
        {
            int port = port(capped, listener);
            List<Socket> kept = new ArrayList<>();
            for (int i = 0; i < cap; i++)
            {
                Socket socket = open("127.0.0.1", port);
                socket.getOutputStream().write(("GET " + servedOn(listener) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
                assertEquals(200, RawHttp.read(socket.getInputStream()).status());
                kept.add(socket);
            }

            try (Socket fresh = open("127.0.0.9", port))
            {
                fresh.getOutputStream().write("GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1));
                assertEquals(200, RawHttp.read(fresh.getInputStream()).status());
            }
            await().atMost(Duration.ofSeconds(10)).until(() -> closedByGateway(kept.get(0)));
            assertTrue(capped.sandgate().metrics().get("sandgate.connections.evicted").counter().count() >= 1);
        }
    }

    /**
     * On the public listener the head is the gateway's own connection's to read, on the internal
     * one Jetty's; a connection idle for longer than the head timeout between its requests keeps
     * its place: the idle timeout is what bounds that wait.
     */
    @ParameterizedTest
    @ValueSource(strings = {"public", "internal"})
    void aHeadTrickledAByteAtATime_isClosedAtTheHeadTimeout_butAnIdleConnectionIsNot(String listener) throws Exception
    {
        try (RunningGateway timed = gateway.startAnother(config -> config.set("server.head-timeout", "1s")))
        {
            int port = port(timed, listener);
            Socket idle = open("127.0.0.1", port);
            assertServed(idle, listener, "");

            Socket slow = open("127.0.0.1", port);
            slow.getOutputStream().write(HEAD.getBytes(StandardCharsets.ISO_8859_1));
            assertClosedAtTheHeadTimeout(timed, () -> trickle(slow));
            // Idle for longer than the head timeout, and served.
            assertServed(idle, listener, "");
        }
    }

    /**
     * Blank lines before a request line, which the parser ignores (RFC 9112, section 2.2), are a
     * head's first bytes too: sent one at a time they held a connection past the head timeout for
     * as long as they came within the idle timeout (8 KB of them, a day at one a minute), and each
     * made it look freshly idle to the connection limit. One burst of them after a request, as some
     * clients send after a body, is left to the idle timeout.
     */
    @ParameterizedTest
    @ValueSource(strings = {"public", "internal"})
    void blankLinesTrickledBeforeARequestLine_areClosedAtTheHeadTimeout(String listener) throws Exception
    {
        try (RunningGateway timed = gateway.startAnother(config -> config.set("server.head-timeout", "1s")))
        {
            int port = port(timed, listener);
            Socket padded = open("127.0.0.1", port);
            assertServed(padded, listener, "\r\n");

            Socket slow = open("127.0.0.1", port);
            assertClosedAtTheHeadTimeout(timed, () -> trickle(slow, '\n'));
            // One burst of blank lines after its request, and idle since for longer than the head timeout.
            assertServed(padded, listener, "");
        }
    }

    private static int port(RunningGateway gateway, String listener)
    {
        return "public".equals(listener) ? gateway.port() : gateway.internalPort();
    }

    /** A GET the listener serves, then {@code after} (blank lines, say), on {@code socket}: answered 200. */
    private static void assertServed(Socket socket, String listener, String after) throws IOException
    {
        socket.getOutputStream().write(("GET " + servedOn(listener) + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + after).getBytes(StandardCharsets.ISO_8859_1));
        assertEquals(200, RawHttp.read(socket.getInputStream()).status());
    }

    /** Feeds a connection with {@code trickle} until the gateway closes it, which must be at the head timeout (1 s), not before. */
    private static void assertClosedAtTheHeadTimeout(RunningGateway timed, Callable<Boolean> trickle)
    {
        long start = System.nanoTime();
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100)).until(() -> !trickle.call());
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        assertTrue(took.compareTo(Duration.ofMillis(900)) > 0, "closed before its deadline, after " + took);
        assertEquals(1, timed.sandgate().metrics().get("sandgate.requests.head-timeouts").counter().count());
    }

    /**
     * A path each listener answers on its own connection: on the public one a sandbox's page,
     * which the gateway's browser connection serves (health would go to Jetty's), on the internal
     * one health, on Jetty's.
     */
    private static String servedOn(String listener)
    {
        return "public".equals(listener) ? "/vnc/1/kept" : "/healthz";
    }

    /** A connection from {@code address}, held until the test ends. */
    private Socket open(String address, int port) throws IOException
    {
        Socket socket = new Socket();
        held.add(socket);
        socket.bind(new InetSocketAddress(address, 0));
        socket.connect(new InetSocketAddress("127.0.0.1", port), 5000);
        socket.setSoTimeout(5000);
        return socket;
    }

    /** An attacker's connection: opened, its bytes sent; the gateway may close it at any time after. */
    private Socket attack(String address, String bytes) throws IOException
    {
        Socket socket = open(address, gateway.port());
        writeQuietly(socket, bytes);
        return socket;
    }

    private static void writeQuietly(Socket socket, String bytes)
    {
        if (bytes.isEmpty())
            return;
        try
        {
            OutputStream out = socket.getOutputStream();
            out.write(bytes.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
        }
        catch (IOException closed)
        {
            // The gateway made room with it.
        }
    }

    private static void readQuietly(Socket socket, String until)
    {
        try
        {
            readUntil(socket.getInputStream(), until);
        }
        catch (IOException closed)
        {
            // As above.
        }
    }

    /** What arrives until {@code text} has, or the connection ends. */
    private static String readUntil(InputStream in, String text) throws IOException
    {
        StringBuilder read = new StringBuilder();
        while (!read.toString().contains(text))
        {
            int b = in.read();
            if (b < 0)
                break;
            read.append((char)b);
        }
        return read.toString();
    }

    /** Sends one more byte of the head; false once the gateway has closed the connection. */
    private static boolean trickle(Socket socket)
    {
        return trickle(socket, 'a');
    }

    /** Sends one more byte, {@code b}; false once the gateway has closed the connection. */
    private static boolean trickle(Socket socket, char b)
    {
        try
        {
            socket.getOutputStream().write(b);
            socket.getOutputStream().flush();
        }
        catch (IOException closed)
        {
            return false;
        }
        return !closedByGateway(socket);
    }

    /** Whether the gateway has closed the connection: the end of the stream, a reset, or an answer it closes after (a 408). */
    private static boolean closedByGateway(Socket socket)
    {
        try
        {
            socket.setSoTimeout(1);
            socket.getInputStream().read();
            return true;
        }
        catch (SocketTimeoutException open)
        {
            return false;
        }
        catch (IOException reset)
        {
            return true;
        }
    }
}
