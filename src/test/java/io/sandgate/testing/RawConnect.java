package io.sandgate.testing;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;

/**
 * A CONNECT as an HTTPS_PROXY client sends it, written by hand on a socket of its own, so that a
 * test can hold many of them open at once and see exactly the status line the gateway answers.
 */
public final class RawConnect
{
    private RawConnect()
    {
    }

    /**
     * Sends {@code CONNECT authority} with {@code X-Agent-Task-Type: taskType} to {@code port} on
     * loopback, on {@code executor}; completes with the status line, or "" when the gateway closed
     * without one.
     */
    public static CompletableFuture<String> send(int port, String authority, String taskType, Executor executor)
    {
        return CompletableFuture.supplyAsync(() ->
        {
            try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), port))
            {
                socket.setSoTimeout(30_000);
                socket.getOutputStream().write(("CONNECT " + authority + " HTTP/1.1\r\nHost: " + authority + "\r\nX-Agent-Task-Type: " + taskType + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
                return statusLine(socket.getInputStream());
            }
            catch (IOException x)
            {
                throw new IllegalStateException(x);
            }
        }, executor);
    }

    private static String statusLine(InputStream in) throws IOException
    {
        StringBuilder line = new StringBuilder();
        for (int b = in.read(); b >= 0 && b != '\n'; b = in.read())
            line.append((char)b);
        return line.toString().trim();
    }
}
