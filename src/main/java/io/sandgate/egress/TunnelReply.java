package io.sandgate.egress;

import java.io.IOException;
import java.nio.ByteBuffer;

import org.eclipse.jetty.http.HttpStatus;

/**
 * The head of an egress node's answer to a {@code CONNECT}, read as it arrives without consuming a
 * byte past it: what follows the empty line already belongs to the tunnel. {@link #room()} says how
 * many bytes the next read may take so that it cannot reach beyond the head.
 */
final class TunnelReply
{
    static final int MAX_HEAD = 8192;
    private static final byte[] END = {'\r', '\n', '\r', '\n'};

    private final StringBuilder head = new StringBuilder();
    /** How many bytes of the terminating CRLF CRLF the head ends with so far. */
    private int matched;

    /** How many bytes the next read may take: none of them can lie past the end of the head. */
    int room()
    {
        return END.length - matched;
    }

    /**
     * Takes the bytes read; no more than {@link #room()} of them.
     *
     * @return whether the head is complete
     * @throws IOException when the head grows beyond {@link #MAX_HEAD}
     */
    boolean feed(ByteBuffer bytes) throws IOException
    {
        if (bytes.remaining() > room())
            throw new IllegalArgumentException("bytes: " + bytes.remaining() + " (expected: at most " + room() + ")");
        while (bytes.hasRemaining())
        {
            byte b = bytes.get();
            head.append((char)(b & 0xFF));
            // CR LF CR LF: a mismatch restarts the match, at the CR it may itself be.
            matched = b == END[matched] ? matched + 1 : b == '\r' ? 1 : 0;
            if (matched == END.length)
                return true;
            if (head.length() >= MAX_HEAD)
                throw new IOException("egress node answered with an oversized head");
        }
        return false;
    }

    /**
     * Checks the complete head's status line.
     *
     * @throws TunnelRefused unless the node opened the tunnel (2xx)
     */
    void requireSuccess() throws IOException
    {
        int eol = head.indexOf("\r\n");
        String[] parts = head.substring(0, eol < 0 ? head.length() : eol).split(" ", 3);
        if (parts.length < 2 || !isSuccess(parts[1]))
            throw new TunnelRefused(parts.length > 1 ? parts[1] : "?");
    }

    /** The node answered the CONNECT, with something else than 2xx. */
    static final class TunnelRefused extends IOException
    {
        TunnelRefused(String status)
        {
            super("egress node refused the tunnel: " + status);
        }
    }

    private static boolean isSuccess(String status)
    {
        try
        {
            return HttpStatus.isSuccess(Integer.parseInt(status));
        }
        catch (NumberFormatException x)
        {
            return false;
        }
    }
}
