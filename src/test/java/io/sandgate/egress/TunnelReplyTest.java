package io.sandgate.egress;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The node's answer to a CONNECT, read as it arrives and never beyond its empty line. */
class TunnelReplyTest
{
    /** Reads {@code bytes} as the tunnel does, {@link TunnelReply#room()} bytes at a time; returns how many it took. */
    private static int read(TunnelReply reply, String bytes) throws IOException
    {
        ByteBuffer wire = StandardCharsets.ISO_8859_1.encode(bytes);
        while (wire.hasRemaining())
        {
            ByteBuffer chunk = wire.slice();
            chunk.limit(Math.min(reply.room(), chunk.remaining()));
            wire.position(wire.position() + chunk.remaining());
            if (reply.feed(chunk))
                return wire.position();
        }
        return -1;
    }

    @Test
    void headEndingInTheMiddleOfTheBytes_isReadUpToItsEmptyLine_andNotOneByteMore() throws IOException
    {
        String head = "HTTP/1.1 200 Connection established\r\nVia: 1.1 node\r\n\r\n";
        TunnelReply reply = new TunnelReply();

        assertEquals(head.length(), read(reply, head + "\u0016\u0003\u0001 first bytes of the target"));
        assertDoesNotThrow(reply::requireSuccess);
    }

    @Test
    void carriageReturnsInsideTheHead_doNotEndIt() throws IOException
    {
        TunnelReply reply = new TunnelReply();
        assertEquals(-1, read(reply, "HTTP/1.1 200 OK\r\nX: a\r\r\n\rb\r\n"));
        assertEquals(2, read(reply, "\r\nrest"));
        assertDoesNotThrow(reply::requireSuccess);
    }

    @Test
    void anyTwoHundred_opensTheTunnel_anythingElseRefuses() throws IOException
    {
        for (String status : new String[] {"200 OK", "204 No Content"})
        {
            TunnelReply reply = new TunnelReply();
            assertTrue(read(reply, "HTTP/1.1 " + status + "\r\n\r\n") > 0);
            assertDoesNotThrow(reply::requireSuccess, status);
        }
        for (String status : new String[] {"403 Forbidden", "502 Bad Gateway", "abc", ""})
        {
            TunnelReply reply = new TunnelReply();
            read(reply, "HTTP/1.1 " + status + "\r\n\r\n");
            IOException refused = assertThrows(IOException.class, reply::requireSuccess, status);
            assertTrue(refused.getMessage().startsWith("egress node refused the tunnel"), refused.getMessage());
        }
    }

    @Test
    void oversizedHead_isRefused() throws IOException
    {
        TunnelReply reply = new TunnelReply();
        StringBuilder head = new StringBuilder("HTTP/1.1 200 OK\r\n");
        while (head.length() < TunnelReply.MAX_HEAD)
            head.append("X-Padding: 0123456789\r\n");
        IOException oversized = assertThrows(IOException.class, () -> read(reply, head.toString()));
        assertTrue(oversized.getMessage().contains("oversized"), oversized.getMessage());
    }

    @Test
    void moreBytesThanThereIsRoomFor_isACallersMistake()
    {
        TunnelReply reply = new TunnelReply();
        assertEquals(4, reply.room());
        assertThrows(IllegalArgumentException.class, () -> reply.feed(ByteBuffer.allocate(5)));
        assertFalse(assertDoesNotThrow(() -> reply.feed(StandardCharsets.ISO_8859_1.encode("HTT"))));
    }
}
