package io.sandgate.egress;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.zip.Deflater;
import java.util.zip.DeflaterOutputStream;
import java.util.zip.GZIPOutputStream;

import io.sandgate.web.GatewayException;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Decoding a compressed answer as it streams, in chunks of any size, and refusing what cannot be read. */
class BodyDecoderTest
{
    /** An answer of some 100 KB, more than a slice, that compresses as JSON does. */
    private static final byte[] TEXT = text();

    private static byte[] text()
    {
        StringBuilder text = new StringBuilder();
        java.util.Random random = new java.util.Random(7);
        for (int i = 0; text.length() < 100_000; i++)
            text.append("{\"n\":").append(i).append(",\"score\":").append(random.nextInt(1_000_000)).append(",\"echo\":\"h:authorization=Bearer [REDACTED]\"}\n");
        return text.toString().getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] gzip(byte[] data) throws IOException
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (GZIPOutputStream gzip = new GZIPOutputStream(out))
        {
            gzip.write(data);
        }
        return out.toByteArray();
    }

    private static byte[] deflate(byte[] data, boolean raw) throws IOException
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (DeflaterOutputStream deflate = new DeflaterOutputStream(out, new Deflater(Deflater.DEFAULT_COMPRESSION, raw)))
        {
            deflate.write(data);
        }
        return out.toByteArray();
    }

    /** Feeds the body in chunks of {@code size} and returns all that came out, through {@link BodyDecoder#finish()}. */
    private static byte[] decode(BodyDecoder decoder, byte[] body, int size)
    {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (int at = 0; at < body.length; at += size)
        {
            decoder.input(ByteBuffer.wrap(body, at, Math.min(size, body.length - at)));
            for (ByteBuffer slice = decoder.next(); slice.hasRemaining(); slice = decoder.next())
            {
                assertTrue(slice.remaining() <= BodyDecoder.SLICE, "one slice at a time");
                byte[] bytes = new byte[slice.remaining()];
                slice.get(bytes);
                out.writeBytes(bytes);
            }
        }
        decoder.finish();
        return out.toByteArray();
    }

    @Test
    void gzipAndDeflate_decodeWhole_inChunksOfAnySize() throws IOException
    {
        for (int size : List.of(1, 7, 4096, 1 << 20))
        {
            assertArrayEquals(TEXT, decode(BodyDecoder.of(List.of("gzip")), gzip(TEXT), size), "gzip in chunks of " + size);
            assertArrayEquals(TEXT, decode(BodyDecoder.of(List.of("x-gzip")), gzip(TEXT), size));
            assertArrayEquals(TEXT, decode(BodyDecoder.of(List.of("deflate")), deflate(TEXT, false), size), "zlib in chunks of " + size);
            assertArrayEquals(TEXT, decode(BodyDecoder.of(List.of("Deflate")), deflate(TEXT, true), size), "raw deflate in chunks of " + size);
        }
    }

    /**
     * Slices of exactly {@link BodyDecoder#SLICE} from input read whole: what the inflater still
     * holds after filling a slice comes out without more input.
     */
    @Test
    void decodedBytesLeftInTheInflater_comeOutWithoutMoreInput() throws IOException
    {
        for (int size : List.of(BodyDecoder.SLICE, 2 * BodyDecoder.SLICE, 3 * BodyDecoder.SLICE - 1))
        {
            byte[] text = Arrays.copyOf(TEXT, size);
            assertArrayEquals(text, decode(BodyDecoder.of(List.of("deflate")), deflate(text, true), 1 << 20), "raw deflate of " + size);
            assertArrayEquals(text, decode(BodyDecoder.of(List.of("gzip")), gzip(text), 1 << 20), "gzip of " + size);
        }
    }

    @Test
    void gzip_everyMemberIsDecoded_andTheHeadersOptionalFieldsAreSkipped() throws IOException
    {
        byte[] member = gzip(TEXT);
        // FEXTRA (2 bytes), FNAME and FCOMMENT, FHCRC (its value is not checked).
        byte[] fields = {0x1F, (byte)0x8B, 8, 0x04 | 0x08 | 0x10 | 0x02, 0, 0, 0, 0, 0, (byte)0xFF, 2, 0, 'x', 'y', 'a', '.', 't', 0, 'c', 0, 0, 0};
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(member);
        body.writeBytes(fields);
        body.write(member, 10, member.length - 10);
        byte[] twice = Arrays.copyOf(TEXT, TEXT.length * 2);
        System.arraycopy(TEXT, 0, twice, TEXT.length, TEXT.length);
        for (int size : List.of(1, 5, 1 << 20))
            assertArrayEquals(twice, decode(BodyDecoder.of(List.of("gzip")), body.toByteArray(), size), "in chunks of " + size);
    }

    @Test
    void identityOrNoEncoding_needsNoDecoder_andAnEmptyBodyIsWhole()
    {
        assertNull(BodyDecoder.of(List.of()));
        assertNull(BodyDecoder.of(List.of("identity", " Identity ")));
        assertEquals(0, decode(BodyDecoder.of(List.of("gzip")), new byte[0], 1).length, "a HEAD's answer, or a 204's");
    }

    @Test
    void encodingsItCannotDecode_areRefusedWith502_namingOnlyKnownOnes()
    {
        GatewayException brotli = assertThrows(GatewayException.class, () -> BodyDecoder.of(List.of("br")));
        assertEquals(502, brotli.status());
        assertEquals(BodyDecoder.ENCODED_RESPONSE, brotli.code());
        assertTrue(brotli.getMessage().contains("Content-Encoding br"), brotli.getMessage());
        GatewayException odd = assertThrows(GatewayException.class, () -> BodyDecoder.of(List.of("sk-proj-lookslikeakey")));
        assertTrue(odd.getMessage().contains("unknown kind") && !odd.getMessage().contains("sk-proj"), "the target's header is not repeated: " + odd.getMessage());
        assertEquals(502, assertThrows(GatewayException.class, () -> BodyDecoder.of(List.of("gzip, gzip"))).status(), "one layer is decoded, not several");
        assertEquals(502, assertThrows(GatewayException.class, () -> BodyDecoder.of(List.of("gzip", "zstd"))).status());
    }

    @Test
    void malformedOrTruncatedBodies_areRefused() throws IOException
    {
        byte[] gzipped = gzip(TEXT);
        assertThrows(GatewayException.class, () -> decode(BodyDecoder.of(List.of("gzip")), TEXT, 100), "not gzip at all");
        assertThrows(GatewayException.class, () -> decode(BodyDecoder.of(List.of("gzip")), Arrays.copyOf(gzipped, gzipped.length - 4), 100), "no trailer");
        assertThrows(GatewayException.class, () -> decode(BodyDecoder.of(List.of("gzip")), Arrays.copyOf(gzipped, 6), 100), "half a header");
        byte[] corrupt = gzipped.clone();
        Arrays.fill(corrupt, 12, 40, (byte)0xFF);
        assertThrows(GatewayException.class, () -> decode(BodyDecoder.of(List.of("gzip")), corrupt, 100), "corrupt data");
        byte[] zlib = deflate(TEXT, false);
        assertThrows(GatewayException.class, () -> decode(BodyDecoder.of(List.of("deflate")), Arrays.copyOf(zlib, zlib.length / 2), 100), "cut short");
    }

    /**
     * A bomb is refused on its first slice, before anything of it could be sent, however much of it
     * has come; a short answer of one repeated byte is no bomb.
     */
    @Test
    void bodyExpandingMoreThanTheRatio_isRefusedOnItsFirstSlice() throws IOException
    {
        BodyDecoder bomb = BodyDecoder.of(List.of("gzip"));
        bomb.input(ByteBuffer.wrap(gzip(new byte[64 * 1024 * 1024])));
        GatewayException refused = assertThrows(GatewayException.class, bomb::next);
        assertEquals(502, refused.status());
        assertTrue(refused.getMessage().contains("expands more than " + BodyDecoder.MAX_RATIO + " times"), refused.getMessage());

        byte[] spaces = new byte[BodyDecoder.RATIO_GRACE];
        Arrays.fill(spaces, (byte)' ');
        assertArrayEquals(spaces, decode(BodyDecoder.of(List.of("gzip")), gzip(spaces), 1 << 20));
    }
}
