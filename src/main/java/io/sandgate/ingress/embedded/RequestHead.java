package io.sandgate.ingress.embedded;

import java.nio.ByteBuffer;
import java.util.Arrays;

import io.sandgate.ingress.ForwardPolicy;
import io.sandgate.ingress.SandboxHead;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;

/**
 * An HTTP/1.1 request head as bytes: the request line, the header fields, the blank line, written
 * field by field as they are decided ({@link ForwardPolicy#requestHead}). The fields come from a
 * parsed request and the gateway's own, so they hold no line breaks; any that did would become
 * spaces, as Jetty's generator writes them, rather than start a header of their own.
 *
 * <p>The head is laid out in an array and copied to a pooled buffer at once when it is finished:
 * a direct buffer's checks on each byte put cost more than the array and the copy.</p>
 */
final class RequestHead implements SandboxHead
{
    /** Most heads fit. */
    private static final int HEAD_BYTES = 2048;
    private static final String VERSION = " HTTP/1.1";

    private byte[] bytes;
    private int at;

    private RequestHead(byte[] bytes)
    {
        this.bytes = bytes;
    }

    /** A head that starts with the request line for {@code method} and {@code target}. */
    static RequestHead start(String method, String target)
    {
        RequestHead head = new RequestHead(new byte[HEAD_BYTES]);
        head.room(method.length() + 1 + target.length() + VERSION.length() + 2);
        head.put(method);
        head.bytes[head.at++] = ' ';
        head.put(target);
        head.put(VERSION);
        head.crlf();
        return head;
    }

    @Override
    public void field(HttpField field)
    {
        HttpHeader header = field.getHeader();
        String name = field.getName();
        // A known name as Jetty spells it (its own string, hence the identity) has its bytes ready, with
        // the colon and space; a name that kept the client's spelling is written as it was spelt.
        if (header == null || name != header.asString())
        {
            field(name, field.getValue());
            return;
        }
        String value = field.getValue();
        byte[] colonSpace = header.getBytesColonSpace();
        room(colonSpace.length + value.length() + 2);
        System.arraycopy(colonSpace, 0, bytes, at, colonSpace.length);
        at += colonSpace.length;
        put(value);
        crlf();
    }

    @Override
    public void field(String name, String value)
    {
        room(name.length() + value.length() + 4);
        put(name);
        bytes[at++] = ':';
        bytes[at++] = ' ';
        put(value);
        crlf();
    }

    /**
     * The head in a buffer of the pool's, ready to write (flush mode); whoever writes it releases it.
     * Direct, as the socket takes it without a copy, and pooled.
     */
    RetainableByteBuffer finish(ByteBufferPool pool)
    {
        room(2);
        crlf();
        RetainableByteBuffer buffer = pool.acquire(at, true);
        ByteBuffer head = buffer.getByteBuffer();
        head.clear();
        head.put(bytes, 0, at);
        head.flip();
        return buffer;
    }

    /** Makes room for {@code length} more bytes. */
    private void room(int length)
    {
        if (at + length > bytes.length)
            bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, at + length));
    }

    private void crlf()
    {
        bytes[at++] = '\r';
        bytes[at++] = '\n';
    }

    /** ISO-8859-1, as header fields are read; a line break, or a character beyond, goes as a space or a question mark. */
    private void put(String text)
    {
        byte[] head = bytes;
        int i = at;
        for (int c = 0; c < text.length(); c++)
        {
            char ch = text.charAt(c);
            head[i++] = ch == '\r' || ch == '\n' ? (byte)' ' : ch > 0xFF ? (byte)'?' : (byte)ch;
        }
        at = i;
    }
}
