package io.sandgate.ingress;

import java.nio.ByteBuffer;

import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;

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

    static ByteBuffer of(String method, String target, HttpFields fields)
    {
        int size = method.length() + target.length() + 14;
        for (HttpField field : fields)
            size += field.getName().length() + field.getValue().length() + 4;
        byte[] head = new byte[size];
        int at = put(head, 0, method);
        head[at++] = ' ';
        at = put(head, at, target);
        at = put(head, at, " HTTP/1.1");
        at = crlf(head, at);
        for (HttpField field : fields)
        {
            at = put(head, at, field.getName());
            head[at++] = ':';
            head[at++] = ' ';
            at = put(head, at, field.getValue());
            at = crlf(head, at);
        }
        at = crlf(head, at);
        return ByteBuffer.wrap(head, 0, at);
    }

    private static int crlf(byte[] head, int at)
    {
        head[at] = '\r';
        head[at + 1] = '\n';
        return at + 2;
    }

    /** ISO-8859-1, as header fields are read; a line break, or a character beyond, goes as a space or a question mark. */
    private static int put(byte[] head, int at, String text)
    {
        for (int i = 0; i < text.length(); i++)
        {
            char c = text.charAt(i);
            head[at++] = c == '\r' || c == '\n' ? (byte)' ' : c > 0xFF ? (byte)'?' : (byte)c;
        }
        return at;
    }
}
