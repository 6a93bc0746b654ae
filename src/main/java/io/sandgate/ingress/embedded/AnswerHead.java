package io.sandgate.ingress.embedded;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import io.sandgate.core.Ascii;
import io.sandgate.ingress.Ingress;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.PreEncodedHttpField;

/**
 * Reads the plain kind of answer head, the kind nearly every sandbox sends, without Jetty's
 * {@code HttpParser}, and leaves every other kind to it.
 *
 * <p>Jetty's parser looks each line up, name and value together, in a trie of common fields, and
 * builds what it does not find there a character at a time: for the seven lines of a static file's
 * answer that was 6.5 % of the gateway's CPU at saturation, its largest single step. This reads a
 * head only when all of it is in the buffer and it has a strict form:</p>
 * <ul>
 * <li>an {@code HTTP/1.1} or {@code HTTP/1.0} status line of a final status that has a body (200 to
 * 599, not 204 or 304), with a reason of visible ASCII and spaces;</li>
 * <li>fields of a token, a colon and a value of visible ASCII with spaces and tabs inside, every
 * line ended by CR LF;</li>
 * <li>one {@code Content-Length} of digits, and no {@code Transfer-Encoding} or {@code Host};</li>
 * <li>at most {@link #MAX_HEAD} bytes.</li>
 * </ul>
 * <p>Anything else (a bare LF, a folded line, a byte outside ASCII, a second length, a chunked or
 * unframed body, a head still arriving) is declined before a byte is taken, and Jetty's parser reads
 * it with its own checks and refusals, as it read every answer before. Each head this reads, Jetty's
 * parser reads to the same status, fields and length: {@code AnswerHeadTest} runs both on the same
 * heads and on 100 000 random changes of them, so that no answer can be framed one way here
 * and another way there.</p>
 *
 * <p>A link carries one sandbox's answers, and they mostly repeat, line for line, all but the
 * {@code Date}: each line's field is kept, and a line of the same bytes at the same place in the next
 * head gives the same field again, with no string or field built for it. A field seen twice is
 * pre-encoded, so that Jetty copies its bytes into the browser's head instead of checking each
 * character as it writes it. Only what is built is remembered: the line is read, checked and
 * judged as any other, and its field, being the same bytes, is what it would have been.</p>
 *
 * <p>Not thread-safe: one per link, used by whoever runs its parse.</p>
 */
final class AnswerHead
{
    /** Well within the link's limit ({@link Ingress#MAX_ANSWER_HEAD}): a longer head goes to Jetty, which enforces that. */
    static final int MAX_HEAD = 4 * 1024;
    /** Up to 10^18 - 1, within a long: a longer length is Jetty's to judge. */
    private static final int MAX_LENGTH_DIGITS = 18;
    private static final byte[] HTTP_1 = "HTTP/1.".getBytes(StandardCharsets.US_ASCII);
    /** The names Jetty knows, by a hash of their lower case, so that a name costs one pass over its bytes. */
    private static final int NAME_SLOTS = 512;
    private static final HttpHeader[] NAMES = new HttpHeader[NAME_SLOTS];
    private static final byte[][] LOWER_NAMES = new byte[NAME_SLOTS][];
    /**
     * The bytes of the head, copied out of the connection's direct buffer in one go: reading them
     * one at a time from it, and building strings from it, costs more than the copy. One per
     * thread, since a pool of links would otherwise hold one each.
     */
    private static final ThreadLocal<byte[]> SCRATCH = ThreadLocal.withInitial(() -> new byte[MAX_HEAD]);

    static
    {
        for (HttpHeader header : HttpHeader.values())
        {
            byte[] lower = header.lowerCaseName().getBytes(StandardCharsets.US_ASCII);
            int hash = 0;
            for (byte b : lower)
                hash = 31 * hash + b;
            int slot = slot(hash);
            while (NAMES[slot] != null)
                slot = (slot + 1) & (NAME_SLOTS - 1);
            NAMES[slot] = header;
            LOWER_NAMES[slot] = lower;
        }
    }

    /** The lines remembered of the last head: its first ones, enough for a server's usual head. */
    private static final int REMEMBERED_LINES = 16;
    /** A longer line is not kept: a cookie or a token that changes with every answer. */
    private static final int REMEMBERED_LINE_BYTES = 256;

    private int status;
    private boolean keepAlive;
    private long contentLength;
    /** The last head's fields by line, and each line's bytes from its name to its value's end; null where none is kept. */
    private final HttpField[] lastFields = new HttpField[REMEMBERED_LINES];
    private final byte[][] lastLines = new byte[REMEMBERED_LINES][];

    /**
     * Reads the head at the buffer's position.
     *
     * @param fields emptied, then given the head's fields
     * @return true if the head was read: the buffer is past it, and {@link #status},
     *         {@link #keepAlive} and {@link #contentLength} tell about it; false if it is for Jetty's
     *         parser: the buffer is as it was and the fields are empty
     */
    boolean read(ByteBuffer buffer, HttpFields.Mutable fields)
    {
        fields.clear();
        int available = Math.min(buffer.remaining(), MAX_HEAD);
        byte[] head = SCRATCH.get();
        buffer.get(buffer.position(), head, 0, available);
        int length = parse(head, available, fields);
        if (length < 0)
        {
            fields.clear();
            return false;
        }
        buffer.position(buffer.position() + length);
        return true;
    }

    int status()
    {
        return status;
    }

    /** HTTP/1.1 without {@code Connection: close}. */
    boolean keepAlive()
    {
        return keepAlive;
    }

    long contentLength()
    {
        return contentLength;
    }

    /** @return the head's length, or -1 to leave it to Jetty's parser */
    private int parse(byte[] head, int available, HttpFields.Mutable fields)
    {
        // "HTTP/1.1 200 " and the status line's CR LF at least.
        if (available < 15)
            return -1;
        if (!Arrays.equals(head, 0, HTTP_1.length, HTTP_1, 0, HTTP_1.length))
            return -1;
        byte minor = head[7];
        if ((minor != '1' && minor != '0') || head[8] != ' ' || head[12] != ' ')
            return -1;
        int code = 0;
        for (int i = 9; i < 12; i++)
        {
            byte digit = head[i];
            if (digit < '0' || digit > '9')
                return -1;
            code = code * 10 + digit - '0';
        }
        if (code < 200 || code > 599 || code == 204 || code == 304)
            return -1;
        int at = 13;
        while (at < available && head[at] != '\r')
        {
            if (!isText(head[at]))
                return -1;
            at++;
        }
        at = lineEnd(head, at, available);
        boolean close = false;
        long length = -1;
        while (at >= 0 && at < available)
        {
            if (head[at] == '\r')
            {
                int end = lineEnd(head, at, available);
                if (end < 0 || length < 0)
                    return -1;
                status = code;
                keepAlive = minor == '1' && !close;
                contentLength = length;
                return end;
            }
            int name = at;
            int hash = 0;
            while (at < available && Ascii.TOKEN.has(head[at]))
            {
                byte b = head[at++];
                hash = 31 * hash + (b >= 'A' && b <= 'Z' ? b + ('a' - 'A') : b);
            }
            int nameLength = at - name;
            if (nameLength == 0 || at == available || head[at] != ':')
                return -1;
            at++;
            while (at < available && (head[at] == ' ' || head[at] == '\t'))
                at++;
            int value = at;
            int valueEnd = at;
            while (at < available && head[at] != '\r')
            {
                byte b = head[at++];
                if (b > ' ' && b <= '~')
                    valueEnd = at;
                else if (b != ' ' && b != '\t')
                    return -1;
            }
            at = lineEnd(head, at, available);
            if (at < 0)
                return -1;
            int line = fields.size();
            HttpField field = remembered(line, head, name, valueEnd);
            HttpHeader header = field == null ? known(head, name, nameLength, hash) : field.getHeader();
            if (header == HttpHeader.CONTENT_LENGTH)
            {
                if (length >= 0)
                    return -1;
                length = field == null ? digits(head, value, valueEnd) : field.getLongValue();
                if (length < 0)
                    return -1;
            }
            else if (header == HttpHeader.TRANSFER_ENCODING || header == HttpHeader.HOST)
            {
                return -1;
            }
            if (field == null)
            {
                field = field(header, head, name, nameLength, value, valueEnd, length);
                remember(line, head, name, valueEnd, field);
            }
            if (header == HttpHeader.CONNECTION)
                close |= field.contains("close");
            fields.add(field);
        }
        return -1;
    }

    /** A new line's field. */
    private static HttpField field(HttpHeader header, byte[] head, int name, int nameLength, int value, int valueEnd, long length)
    {
        // Every field's value is a string of its own anyway: Jetty's are too, and the policy reads them.
        String text = new String(head, value, valueEnd - value, StandardCharsets.US_ASCII);
        if (header == null)
            return new HttpField((HttpHeader)null, new String(head, name, nameLength, StandardCharsets.US_ASCII), text);
        // The length as a number: the server looks at it three times as it writes the response.
        if (header == HttpHeader.CONTENT_LENGTH)
            return new HttpField.LongValueHttpField(header, header.asString(), text, length);
        // The name as Jetty spells it, as its parser gives it.
        return new HttpField(header, header.asString(), text);
    }

    /**
     * The field of the last head's line at this place, if that line had these bytes; pre-encoded
     * the second time it is given. Not the length, which stays a number that Jetty reads and writes
     * itself, nor the {@code Date}: it replaces the server's own, and Jetty encodes a pre-encoded
     * field that replaces one of its own once more, for every answer.
     */
    private HttpField remembered(int line, byte[] head, int from, int to)
    {
        if (line >= REMEMBERED_LINES)
            return null;
        byte[] last = lastLines[line];
        if (last == null || !Arrays.equals(head, from, to, last, 0, last.length))
            return null;
        HttpField field = lastFields[line];
        HttpHeader header = field.getHeader();
        if (!(field instanceof PreEncodedHttpField) && header != HttpHeader.CONTENT_LENGTH && header != HttpHeader.DATE)
        {
            // The bytes were checked to be visible ASCII, spaces and tabs: safe to copy unchecked.
            field = header == null ? new PreEncodedHttpField(field.getName(), field.getValue())
                : new PreEncodedHttpField(header, field.getName(), field.getValue());
            lastFields[line] = field;
        }
        return field;
    }

    private void remember(int line, byte[] head, int from, int to, HttpField field)
    {
        if (line >= REMEMBERED_LINES)
            return;
        if (to - from > REMEMBERED_LINE_BYTES)
        {
            lastLines[line] = null;
            lastFields[line] = null;
            return;
        }
        lastLines[line] = Arrays.copyOfRange(head, from, to);
        lastFields[line] = field;
    }

    /** A reason phrase's byte: visible ASCII or a space (Jetty refuses a tab there). */
    private static boolean isText(byte b)
    {
        return b >= ' ' && b <= '~';
    }

    /** @return the position after the CR LF at {@code at}, or -1 if there is none there */
    private static int lineEnd(byte[] head, int at, int available)
    {
        return at + 1 < available && head[at] == '\r' && head[at + 1] == '\n' ? at + 2 : -1;
    }

    private static long digits(byte[] head, int from, int to)
    {
        if (to - from < 1 || to - from > MAX_LENGTH_DIGITS)
            return -1;
        long value = 0;
        for (int i = from; i < to; i++)
        {
            byte b = head[i];
            if (b < '0' || b > '9')
                return -1;
            value = value * 10 + b - '0';
        }
        return value;
    }

    private static HttpHeader known(byte[] head, int name, int length, int hash)
    {
        for (int slot = slot(hash); NAMES[slot] != null; slot = (slot + 1) & (NAME_SLOTS - 1))
        {
            byte[] lower = LOWER_NAMES[slot];
            if (lower.length == length && equalsIgnoringCase(lower, head, name))
                return NAMES[slot];
        }
        return null;
    }

    private static boolean equalsIgnoringCase(byte[] lower, byte[] head, int from)
    {
        for (int i = 0; i < lower.length; i++)
        {
            byte b = head[from + i];
            if ((b >= 'A' && b <= 'Z' ? b + ('a' - 'A') : b) != lower[i])
                return false;
        }
        return true;
    }

    private static int slot(int hash)
    {
        return (hash ^ hash >>> 9) & (NAME_SLOTS - 1);
    }
}
