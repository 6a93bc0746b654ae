package io.sandgate.egress;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.zip.DataFormatException;
import java.util.zip.Inflater;

import io.sandgate.web.GatewayException;
import org.eclipse.jetty.http.HttpStatus;

/**
 * The decoding of a response body that must be read for secrets but came compressed: routes that
 * read responses ask the target for {@code Accept-Encoding: identity}, and a target that compresses
 * anyway would pass the scan unread. {@code gzip} (RFC 1952, every member of it) and
 * {@code deflate} (zlib, RFC 1950, or the raw deflate some servers send instead) are decoded as
 * they stream; an answer in any other encoding, or in several, cannot be read and is refused.
 *
 * <p>Bounded: decoded bytes come out {@link #SLICE} at a time, each written before the next is
 * made, so a body that expands a thousandfold holds no more memory than one that does not; and a
 * body whose decoded bytes outgrow {@link #MAX_RATIO} times the compressed ones read (a
 * decompression bomb; ordinary text and JSON compress ten times or less) is cut off, as a
 * malformed or truncated one is. What is sent on is always what was decoded, so nothing a decoder
 * could be fooled into skipping reaches the agent unscanned.</p>
 */
final class BodyDecoder
{
    /** The error code of an answer the gateway could not read for secrets. */
    static final String ENCODED_RESPONSE = "encoded_response";
    /** Decoded bytes made at a time: what a decoding exchange holds, whatever the body's size. */
    static final int SLICE = 64 * 1024;
    /** How many times the compressed bytes read the decoded ones may come to. */
    static final int MAX_RATIO = 100;
    /**
     * Decoded bytes that pass whatever the ratio: a short answer of one repeated byte is no bomb.
     * Below a slice, so that a bomb is refused on its first slice, before any of it is sent.
     */
    static final int RATIO_GRACE = 16 * 1024;
    /** A gzip header's optional fields (extra, name, comment) are short; one this long is not an answer. */
    private static final int MAX_GZIP_HEADER = 128 * 1024;
    private static final int GZIP_TRAILER = 8;
    /** Encodings named in an error as they are; any other value is the target's text and may be anything. */
    private static final Set<String> KNOWN = Set.of("br", "zstd", "compress", "x-compress", "dcb", "dcz", "aes128gcm", "exi", "pack200-gzip");
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private enum Format
    {
        GZIP, DEFLATE
    }

    /** Where in the body the next byte belongs. */
    private enum Part
    {
        /** A gzip member's header, or a deflate body's first two bytes (zlib or raw). */
        HEADER,
        /** Compressed data, read by the inflater. */
        DATA,
        /** A gzip member's CRC and length. */
        TRAILER,
        /** After the last byte of a member (gzip: another may follow) or of a deflate body. */
        END
    }

    private final Format format;
    private Part part = Part.HEADER;
    private Inflater inflater;
    /** A header's or trailer's bytes gathered so far: they may come split across chunks. */
    private final ByteArrayOutputStream gathered = new ByteArrayOutputStream();
    /** Bytes read with a header that belong to the data after it: the inflater reads them before the chunk. */
    private ByteBuffer ahead = EMPTY;
    private ByteBuffer chunk = EMPTY;
    /** Where slices are made; allocated with the first one. */
    private byte[] out;
    private long fed;
    private long decoded;

    private BodyDecoder(Format format)
    {
        this.format = format;
    }

    /**
     * The decoder for an answer's {@code Content-Encoding}, or null when the answer is not encoded.
     *
     * @param contentEncodings every {@code Content-Encoding} value of the answer
     * @throws GatewayException 502 when the gateway cannot decode it
     */
    static BodyDecoder of(List<String> contentEncodings)
    {
        List<String> codings = new ArrayList<>();
        for (String value : contentEncodings)
        {
            for (String coding : value.split(","))
            {
                String name = coding.strip().toLowerCase(Locale.ROOT);
                if (!name.isEmpty() && !name.equals("identity"))
                    codings.add(name);
            }
        }
        if (codings.isEmpty())
            return null;
        if (codings.size() > 1)
            throw unreadable("the target answered in several content encodings, which the gateway does not decode; it did not read the answer for secrets, and refused it");
        return switch (codings.get(0))
        {
            case "gzip", "x-gzip" -> new BodyDecoder(Format.GZIP);
            case "deflate" -> new BodyDecoder(Format.DEFLATE);
            default -> throw unreadable("the target answered with Content-Encoding " + (KNOWN.contains(codings.get(0)) ? codings.get(0) : "of an unknown kind")
                + ", which the gateway cannot decode; it did not read the answer for secrets, and refused it");
        };
    }

    /** The next chunk of the body as it came; the one before must have been read out with {@link #next()}. */
    void input(ByteBuffer next)
    {
        fed += next.remaining();
        chunk = next;
    }

    /**
     * Up to {@link #SLICE} decoded bytes of what came so far; empty when everything that came has been
     * decoded and the next chunk is needed. The slice is only good until the next call: its bytes are
     * scanned and copied on before another is made.
     *
     * @throws GatewayException 502 when the body is malformed or expands beyond {@link #MAX_RATIO}
     */
    ByteBuffer next()
    {
        if (out == null)
            out = new byte[SLICE];
        int length = 0;
        while (length < SLICE)
        {
            ByteBuffer source = ahead.hasRemaining() ? ahead : chunk;
            if (part == Part.DATA)
            {
                if (inflater.needsInput() && source.hasRemaining())
                    inflater.setInput(source);
                // Inflated even without new input: what filled the last slice may have left more behind.
                int made = inflate(length);
                length += made;
                decoded += made;
                // Checked before the slice is sent: a bomb is refused before any of it has gone.
                if (decoded > RATIO_GRACE && decoded > MAX_RATIO * (fed - ahead.remaining() - chunk.remaining()))
                    throw unreadable("the target's compressed answer expands more than " + MAX_RATIO + " times; it was cut off");
                if (inflater.finished())
                    part = format == Format.GZIP ? Part.TRAILER : Part.END;
                else if (made == 0 && !inflater.needsInput())
                    throw malformed(); // it asks for a preset dictionary, which HTTP has no way to name
                else if (made == 0 && !ahead.hasRemaining() && !chunk.hasRemaining())
                    break;
            }
            else if (!source.hasRemaining())
            {
                break;
            }
            else if (part == Part.END)
            {
                // Another gzip member may follow; a deflate body's trailing bytes are nothing of it.
                if (format == Format.DEFLATE)
                    source.position(source.limit());
                else
                    part = Part.HEADER;
            }
            else if (part == Part.TRAILER)
            {
                gather(source, GZIP_TRAILER - gathered.size());
                if (gathered.size() == GZIP_TRAILER)
                {
                    gathered.reset();
                    part = Part.END;
                }
            }
            else
            {
                header(source);
            }
        }
        return ByteBuffer.wrap(out, 0, length).asReadOnlyBuffer();
    }

    /**
     * The end of the body: it must end where a gzip member or the deflate data does (or be empty, as
     * a HEAD's answer is).
     *
     * @throws GatewayException 502 when the body stopped short
     */
    void finish()
    {
        boolean whole = part == Part.END || part == Part.HEADER && gathered.size() == 0 && !ahead.hasRemaining() && !chunk.hasRemaining();
        if (inflater != null)
            inflater.end();
        if (!whole)
            throw unreadable("the target's compressed answer ended before its end; it was cut off");
    }

    private int inflate(int offset)
    {
        try
        {
            return inflater.inflate(out, offset, out.length - offset);
        }
        catch (DataFormatException malformed)
        {
            // Its message quotes nothing of the body, but the body's bytes are the target's: none is kept.
            throw malformed();
        }
    }

    /** Reads a gzip member's header, or a deflate body's first two bytes, and starts the inflater after it. */
    private void header(ByteBuffer source)
    {
        gather(source, format == Format.GZIP ? source.remaining() : 2 - gathered.size());
        byte[] bytes = gathered.toByteArray();
        int length = format == Format.GZIP ? gzipHeaderLength(bytes) : bytes.length == 2 ? 0 : -1;
        if (length < 0)
        {
            if (bytes.length > MAX_GZIP_HEADER)
                throw malformed();
            return;
        }
        gathered.reset();
        ahead = ByteBuffer.wrap(bytes, length, bytes.length - length);
        if (inflater == null)
            // RFC 9110 says deflate is zlib's format; some servers send the raw data alone, which
            // browsers read too. A zlib header is a method of 8 and a check multiple of 31.
            inflater = new Inflater(format == Format.GZIP || (bytes[0] & 0x0F) != 8 || ((bytes[0] & 0xFF) << 8 | bytes[1] & 0xFF) % 31 != 0);
        else
            inflater.reset();
        part = Part.DATA;
    }

    /**
     * The length of the gzip header at the start of {@code bytes} (RFC 1952, section 2.3), or -1 when
     * more bytes are needed.
     */
    private static int gzipHeaderLength(byte[] bytes)
    {
        if (bytes.length >= 1 && (bytes[0] & 0xFF) != 0x1F || bytes.length >= 2 && (bytes[1] & 0xFF) != 0x8B || bytes.length >= 3 && bytes[2] != 8)
            throw malformed();
        if (bytes.length < 10)
            return -1;
        int flags = bytes[3] & 0xFF;
        int at = 10;
        if ((flags & 0x04) != 0)
        {
            if (bytes.length < at + 2)
                return -1;
            at += 2 + ((bytes[at] & 0xFF) | (bytes[at + 1] & 0xFF) << 8);
        }
        for (int field : new int[] {0x08, 0x10})
        {
            if ((flags & field) == 0)
                continue;
            while (at < bytes.length && bytes[at] != 0)
                at++;
            if (at >= bytes.length)
                return -1;
            at++;
        }
        if ((flags & 0x02) != 0)
            at += 2;
        return at <= bytes.length ? at : -1;
    }

    private void gather(ByteBuffer source, int count)
    {
        int taken = Math.min(count, source.remaining());
        for (int i = 0; i < taken; i++)
            gathered.write(source.get());
    }

    private static GatewayException malformed()
    {
        return unreadable("the target's compressed answer is malformed; it was cut off");
    }

    private static GatewayException unreadable(String message)
    {
        return new GatewayException(HttpStatus.BAD_GATEWAY_502, ENCODED_RESPONSE, message);
    }
}
