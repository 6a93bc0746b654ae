package io.sandgate.ingress.embedded;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.channels.UnresolvedAddressException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sandgate.web.ClientInfo;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.util.Promise;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The public listener's selectors carrying connections the gateway opens ({@link IngressConnector}),
 * against a real Jetty server and real sockets: each lands on the selector asked for, is none of the
 * server's accepted connections, and closes with the server; a connect that fails or outlasts the
 * connect timeout fails its promise.
 */
class IngressConnectorTest
{
    private Server server;
    private ClientConnectionLimit limit;
    private IngressConnector connector;
    private ServerSocket target;

    @BeforeEach
    void start() throws Exception
    {
        server = new Server();
        limit = new ClientConnectionLimit(1, new ClientInfo(List.of()), new SimpleMeterRegistry());
        connector = new IngressConnector(server, 2, limit, new ServerConnectionLimit(1024, new SimpleMeterRegistry()), new HttpConnectionFactory());
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.start();
        // The kernel completes a connect to it; nothing needs to accept.
        target = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    }

    @AfterEach
    void stop() throws Exception
    {
        server.stop();
        target.close();
    }

    @Test
    void aDialedConnection_isOnTheSelectorAskedFor_isNotTheServers_andClosesWithIt() throws Exception
    {
        assertEquals(2, connector.lanes());
        // The same selector twice in a row, which taking turns would not give.
        List<Connection> dialed = new ArrayList<>();
        for (int lane : new int[] {1, 1, 0, 0})
            dialed.add(dial(lane, address(target.getLocalPort())).get(10, TimeUnit.SECONDS));

        assertEquals(List.of(1, 1, 0, 0), dialed.stream().map(connection -> IngressConnector.lane(connection.getEndPoint())).toList());
        // None among what the server counts as its connections, which a graceful stop waits for.
        for (Connection connection : dialed)
            assertFalse(connector.getConnectedEndPoints().contains(connection.getEndPoint()));
        // Nor do they count as a client's connections (the limit is 1, the sandbox's address is the client's).
        assertEquals(0, limit.count("127.0.0.1"));

        server.stop();
        await().atMost(Duration.ofSeconds(5)).until(() -> dialed.stream().noneMatch(connection -> connection.getEndPoint().isOpen()));
    }

    @Test
    void aDialToAPortNothingListensOn_failsItsPromise() throws Exception
    {
        int closedPort;
        try (ServerSocket gone = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            closedPort = gone.getLocalPort();
        }
        ExecutionException failure = assertThrows(ExecutionException.class, () -> dial(0, address(closedPort)).get(10, TimeUnit.SECONDS));
        assertInstanceOf(IOException.class, failure.getCause());
    }

    @Test
    void aDialToANameWithNoAddress_failsItsPromise() throws Exception
    {
        ExecutionException failure = assertThrows(ExecutionException.class,
            () -> dial(1, InetSocketAddress.createUnresolved("no-such-sandbox.invalid", 80)).get(10, TimeUnit.SECONDS));
        assertInstanceOf(UnresolvedAddressException.class, failure.getCause());
    }

    @Test
    void aDialNoOneAnswers_failsItsPromiseAfterTheConnectTimeout() throws Exception
    {
        connector.setConnectTimeout(300);
        List<Socket> queued = new ArrayList<>();
        try (ServerSocket full = new ServerSocket(0, 1, InetAddress.getLoopbackAddress()))
        {
            // Nothing accepts: once its queue is full the kernel drops further SYNs, and a connect hangs.
            await().atMost(Duration.ofSeconds(10)).until(() ->
            {
                Socket socket = new Socket();
                queued.add(socket);
                try
                {
                    socket.connect(full.getLocalSocketAddress(), 200);
                    return false;
                }
                catch (SocketTimeoutException x)
                {
                    return true;
                }
            });
            ExecutionException failure = assertThrows(ExecutionException.class, () -> dial(0, address(full.getLocalPort())).get(10, TimeUnit.SECONDS));
            assertInstanceOf(SocketTimeoutException.class, failure.getCause());
        }
        finally
        {
            for (Socket socket : queued)
                socket.close();
        }
    }

    @Test
    void aConnectionThatCannotBeMade_failsItsPromise() throws Exception
    {
        // A connect that completes within the call would go Jetty's accepted-channel way, whose
        // failures have a hook of their own; on Linux loopback it never did in these 20 dials.
        for (int i = 0; i < 20; i++)
        {
            CompletableFuture<Connection> opened = new CompletableFuture<>();
            connector.dial(i % 2, address(target.getLocalPort()), endPoint ->
            {
                throw new IllegalStateException("no connection for this endpoint");
            }, Promise.from(opened::complete, opened::completeExceptionally));
            ExecutionException failure = assertThrows(ExecutionException.class, () -> opened.get(10, TimeUnit.SECONDS));
            assertInstanceOf(IllegalStateException.class, failure.getCause());
        }
    }

    private CompletableFuture<Connection> dial(int lane, InetSocketAddress address)
    {
        CompletableFuture<Connection> opened = new CompletableFuture<>();
        connector.dial(lane, address, Idle::new, Promise.from(opened::complete, opened::completeExceptionally));
        return opened;
    }

    private static InetSocketAddress address(int port)
    {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
    }

    /** A connection that reads nothing. */
    private final class Idle extends AbstractConnection
    {
        Idle(EndPoint endPoint)
        {
            super(endPoint, server.getThreadPool());
        }

        @Override
        public void onFillable()
        {
        }
    }
}
