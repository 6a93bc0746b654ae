package io.sandgate.ingress;

import java.nio.ByteBuffer;

import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;

/**
 * An HTTP/1.1 request head as bytes: the request line, the header fields, the blank line. The
 * fields come from a parsed request and the gateway's own, so they hold no line breaks; any that
 * did would become spaces, as Jetty's generator writes them, rather than start a header of their own.
 */
final class RequestHead
{
    private RequestHead()
    {
    }

    /**
     * The head in a buffer of the pool's, ready to write (flush mode); whoever writes it releases it.
     * Direct, as the socket takes it without a copy, and pooled: a head per request is otherwise the
     * largest allocation on the core front-end's path.
     */
    static RetainableByteBuffer of(String method, String target, HttpFields fields, ByteBufferPool pool)
    {
        int size = method.length() + target.length() + 14;
        for (HttpField field : fields)
            size += field.getName().length() + field.getValue().length() + 4;
        RetainableByteBuffer buffer = pool.acquire(size, true);
        ByteBuffer head = buffer.getByteBuffer();
        head.clear();
        put(head, method);
        head.put((byte)' ');
        put(head, target);
        put(head, " HTTP/1.1");
        crlf(head);
        for (HttpField field : fields)
        {
            put(head, field.getName());
            head.put((byte)':').put((byte)' ');
            put(head, field.getValue());
            crlf(head);
        }
        crlf(head);
        head.flip();
        return buffer;
    }

    private static void crlf(ByteBuffer head)
    {
        head.put((byte)'\r').put((byte)'\n');
    }

    /** ISO-8859-1, as header fields are read; a line break, or a character beyond, goes as a space or a question mark. */
    private static void put(ByteBuffer head, String text)
    {
        for (int i = 0; i < text.length(); i++)
        {
            char c = text.charAt(i);
            head.put(c == '\r' || c == '\n' ? (byte)' ' : c > 0xFF ? (byte)'?' : (byte)c);
        }
    }
}
