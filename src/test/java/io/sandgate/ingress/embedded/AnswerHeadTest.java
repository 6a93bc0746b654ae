package io.sandgate.ingress.embedded;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import io.sandgate.ingress.Ingress;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.PreEncodedHttpField;
import org.eclipse.jetty.util.BufferUtil;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The plain answer heads the link reads itself must read exactly as Jetty's parser reads them, and
 * every other head must be left to that parser untouched: checked on the same heads by both, and on
 * random changes of them, which is where a second reader of the same bytes would differ.
 */
class AnswerHeadTest
{
    private static final String STATIC_FILE = "HTTP/1.1 200 OK\r\nServer: nginx\r\nDate: Thu, 03 Dec 2026 23:43:53 GMT\r\n"
        + "Content-Type: application/octet-stream\r\nContent-Length: 1024\r\nLast-Modified: Thu, 03 Dec 2026 19:37:41 GMT\r\n"
        + "Connection: keep-alive\r\nAccept-Ranges: bytes\r\n\r\n";
    private static final String PYTHON = "HTTP/1.0 200 OK\r\nServer: SimpleHTTP/0.6 Python/3.11.2\r\nDate: Thu, 03 Dec 2026 23:43:53 GMT\r\n"
        + "Content-type: text/html\r\nContent-Length: 7\r\nLast-Modified: Thu, 03 Dec 2026 19:37:41 GMT\r\n\r\n";
    private static final String ODD_BUT_PLAIN = "HTTP/1.1 404 \r\nx-Trace-Id:\t a b\tc \t\r\nSET-COOKIE: a=1; Path=/\r\nset-cookie: b=2\r\n"
        + "Empty:\r\nCONNECTION: Keep-Alive, close\r\ncontent-length: 0007\r\n\r\n";

    @Test
    void aStaticFilesHead_isRead_asJettyReadsIt_andTheBufferIsLeftAtItsBody()
    {
        ByteBuffer buffer = direct(STATIC_FILE + "x".repeat(1024));
        AnswerHead head = new AnswerHead();
        HttpFields.Mutable fields = HttpFields.build().add("X-Last-Answer", "gone");

        assertTrue(head.read(buffer, fields));

        assertEquals(200, head.status());
        assertEquals(1024, head.contentLength());
        assertTrue(head.keepAlive());
        assertEquals(STATIC_FILE.length(), buffer.position());
        assertNull(fields.getField("X-Last-Answer"), "the last answer's fields are not this one's");
        assertEquals(7, fields.size());
        assertEquals(HttpHeader.CONTENT_LENGTH, fields.getField("content-length").getHeader());
        assertEquals(1024, fields.getField(HttpHeader.CONTENT_LENGTH).getLongValue());
        assertSameAsJetty(STATIC_FILE + "x".repeat(1024));
    }

    @Test
    void aHeadSeenAgain_givesTheSameFields_preEncoded_butForALineThatChanged()
    {
        AnswerHead head = new AnswerHead();
        List<HttpField> first = read(head, STATIC_FILE);
        List<HttpField> second = read(head, STATIC_FILE);
        List<HttpField> third = read(head, STATIC_FILE);

        for (int i = 0; i < first.size(); i++)
        {
            HttpField field = second.get(i);
            assertEquals(first.get(i), field);
            if (field.getHeader() == HttpHeader.CONTENT_LENGTH || field.getHeader() == HttpHeader.DATE)
            {
                assertSame(first.get(i), field, "the length stays a number; the date replaces the server's, which Jetty would encode again");
                assertFalse(field instanceof PreEncodedHttpField);
                continue;
            }
            assertTrue(field instanceof PreEncodedHttpField, field::toString);
            assertSame(field, third.get(i), "built once, then given again");
            assertEquals(field.getName() + ": " + field.getValue() + "\r\n", encoded(field));
        }

        String changed = STATIC_FILE.replace("23:43:53", "23:43:54").replace("Content-Length: 1024", "Content-Length: 1025");
        List<HttpField> fourth = read(head, changed);

        assertEquals(1025, head.contentLength(), "a changed line is read anew");
        assertEquals("Thu, 03 Dec 2026 23:43:54 GMT", fourth.get(1).getValue());
        assertNotSame(third.get(1), fourth.get(1));
        assertEquals(1025, fourth.get(3).getLongValue());
        assertSame(third.get(0), fourth.get(0), "the lines that did not change are given again");
        assertSame(third.get(4), fourth.get(4));
        assertSameAsJetty(changed, head);
    }

    @Test
    void aLineAtAnotherPlace_orTooLongToKeep_isBuiltAnew()
    {
        AnswerHead head = new AnswerHead();
        String token = "X-Token: " + "t".repeat(300) + "\r\n";
        String withToken = "HTTP/1.1 200 OK\r\n" + token + "Content-Length: 2\r\n\r\n";
        List<HttpField> first = read(head, withToken);
        List<HttpField> moved = read(head, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n" + token + "\r\n");
        List<HttpField> again = read(head, withToken);

        assertNotSame(first.get(1), moved.get(0));
        assertFalse(again.get(0) instanceof PreEncodedHttpField, "a long line is not kept");
        assertNotSame(first.get(0), again.get(0));
        assertEquals(first, again);
    }

    private static List<HttpField> read(AnswerHead head, String text)
    {
        HttpFields.Mutable fields = HttpFields.build();
        assertTrue(head.read(direct(text), fields), text);
        return fields.stream().toList();
    }

    private static String encoded(HttpField field)
    {
        ByteBuffer buffer = BufferUtil.allocate(512);
        int at = BufferUtil.flipToFill(buffer);
        ((PreEncodedHttpField)field).putTo(buffer, HttpVersion.HTTP_1_1);
        BufferUtil.flipToFlush(buffer, at);
        return BufferUtil.toString(buffer, StandardCharsets.US_ASCII);
    }

    @ParameterizedTest
    @ValueSource(strings = {PYTHON, ODD_BUT_PLAIN})
    void plainHeadsOfOtherServers_areReadAsJettyReadsThem(String text)
    {
        assertTrue(new AnswerHead().read(direct(text), HttpFields.build()));
        assertSameAsJetty(text);
    }

    @Test
    void http10_orConnectionClose_isNotKeptAlive()
    {
        AnswerHead head = new AnswerHead();
        assertTrue(head.read(direct(PYTHON), HttpFields.build()));
        assertFalse(head.keepAlive());
        assertTrue(head.read(direct(ODD_BUT_PLAIN), HttpFields.build()));
        assertFalse(head.keepAlive(), "close among the connection's tokens");
        assertEquals(404, head.status());
        assertEquals(7, head.contentLength());
    }

    @ParameterizedTest
    @ValueSource(strings = {
        // Framed otherwise, or not at all: the parser's.
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length:\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456789\r\n\r\n",
        // Statuses without a body, or not final.
        "HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n",
        "HTTP/1.1 100 Continue\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 101 Switching Protocols\r\nContent-Length: 0\r\n\r\n",
        "HTTP/1.1 600 Beyond\r\nContent-Length: 0\r\n\r\n",
        // Loose forms Jetty judges.
        "HTTP/1.1 200 OK\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\n",
        "HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX-Space : a\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\n: a\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX-Latin: caf\u00e9\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX-Nul: a\u0000b\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX-Del: a\u007fb\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nX-Cr: a\rb\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 OK\r\nHost: example.com\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 \u00e9\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200 \tOK\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 200\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1  200 OK\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.1 2x0 OK\r\nContent-Length: 2\r\n\r\n",
        "HTTP/2.0 200 OK\r\nContent-Length: 2\r\n\r\n",
        "HTTP/1.2 200 OK\r\nContent-Length: 2\r\n\r\n",
        "http/1.1 200 OK\r\nContent-Length: 2\r\n\r\n",
        "\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n",
        "SSH-2.0-OpenSSH_9.6\r\n\r\n",
        // Still arriving.
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r",
        "HTTP/1.1 200 OK\r\nContent-Le",
        "HTTP/1.1 2",
        ""
    })
    void anyOtherHead_isLeftToJettysParser_withTheBufferAsItWas(String text)
    {
        ByteBuffer buffer = direct(text + "ok");
        HttpFields.Mutable fields = HttpFields.build().add("X-Last-Answer", "gone");

        assertFalse(new AnswerHead().read(buffer, fields), text);

        assertEquals(0, buffer.position());
        assertEquals(text.length() + 2, buffer.remaining());
        assertEquals(0, fields.size(), "nothing half read is left behind");
    }

    @Test
    void aHeadLongerThanItReads_isLeftToJettysParser_whichEnforcesTheLinksLimit()
    {
        String filler = "X-Filler: " + "f".repeat(100) + "\r\n";
        String longHead = "HTTP/1.1 200 OK\r\n" + filler.repeat(AnswerHead.MAX_HEAD / filler.length() + 1) + "Content-Length: 2\r\n\r\n";

        assertFalse(new AnswerHead().read(direct(longHead + "ok"), HttpFields.build()));
        assertNotNull(jetty(longHead + "ok").fields, "Jetty reads it: it is within the link's 8 KB");
    }

    @Test
    void randomChangesOfPlainHeads_thatItReads_areReadTheSameByJetty()
    {
        Random random = new Random(20261204);
        byte[] alphabet = "\r\n \t:,;=\"0129aAzZ-_/\u0000\u007f".getBytes(StandardCharsets.ISO_8859_1);
        String[] bases = {STATIC_FILE, PYTHON, ODD_BUT_PLAIN, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n",
            "HTTP/1.1 500 Internal Server Error\r\nCache-Control: no-cache\r\nContent-Type: text/html;charset=utf-8\r\n"
                + "X-Powered-By: Express\r\nContent-Length: 12\r\nETag: W/\"c-abc\"\r\nVary: Accept-Encoding\r\n\r\n"};
        // One reader per base, as one link reads one sandbox's answers: each change is read after
        // others of the same head, so that a line it changed would show if the last field came back.
        AnswerHead[] links = new AnswerHead[bases.length];
        for (int i = 0; i < links.length; i++)
            links[i] = new AnswerHead();
        int read = 0;
        int tries = 100_000;
        for (int i = 0; i < tries; i++)
        {
            byte[] bytes = (bases[i % bases.length] + "body").getBytes(StandardCharsets.ISO_8859_1);
            int changes = 1 + random.nextInt(3);
            for (int c = 0; c < changes; c++)
                bytes = change(bytes, random, alphabet);
            String text = new String(bytes, StandardCharsets.ISO_8859_1);
            if (new AnswerHead().read(direct(text), HttpFields.build()))
            {
                read++;
                assertSameAsJetty(text);
                assertSameAsJetty(text, links[i % bases.length]);
            }
            else
            {
                assertFalse(links[i % bases.length].read(direct(text), HttpFields.build()), text);
            }
        }
        // Enough of them read to mean something; the rest went to Jetty's parser.
        assertTrue(read > tries / 10, "read " + read + " of " + tries);
    }

    private static byte[] change(byte[] bytes, Random random, byte[] alphabet)
    {
        int at = random.nextInt(bytes.length);
        byte b = random.nextInt(4) == 0 ? (byte)random.nextInt(256) : alphabet[random.nextInt(alphabet.length)];
        return switch (random.nextInt(3))
        {
            case 0 ->
            {
                byte[] replaced = bytes.clone();
                replaced[at] = b;
                yield replaced;
            }
            case 1 ->
            {
                byte[] inserted = new byte[bytes.length + 1];
                System.arraycopy(bytes, 0, inserted, 0, at);
                inserted[at] = b;
                System.arraycopy(bytes, at, inserted, at + 1, bytes.length - at);
                yield inserted;
            }
            default ->
            {
                byte[] removed = new byte[bytes.length - 1];
                System.arraycopy(bytes, 0, removed, 0, at);
                System.arraycopy(bytes, at + 1, removed, at, bytes.length - at - 1);
                yield removed;
            }
        };
    }

    /** What this class reads of {@code text} is what Jetty's parser reads of it, as the link would use it. */
    private static void assertSameAsJetty(String text)
    {
        assertSameAsJetty(text, new AnswerHead());
    }

    /** As above, read by a reader that may have read other heads before. */
    private static void assertSameAsJetty(String text, AnswerHead head)
    {
        HttpFields.Mutable fields = HttpFields.build();
        ByteBuffer ours = direct(text);
        assertTrue(head.read(ours, fields));

        Parsed jetty = jetty(text);
        assertNull(jetty.failure, () -> "Jetty refuses what was read: " + jetty.failure + " in " + text);
        assertNotNull(jetty.fields, () -> "Jetty did not read the head whole: " + text);
        assertEquals(jetty.headLength, ours.position(), text);
        assertEquals(jetty.status, head.status(), text);
        assertEquals(jetty.contentLength, head.contentLength(), text);
        boolean jettyKeepAlive = jetty.version == HttpVersion.HTTP_1_1 && jetty.fields.stream()
            .noneMatch(f -> f.getHeader() == HttpHeader.CONNECTION && f.contains("close"));
        assertEquals(jettyKeepAlive, head.keepAlive(), text);
        assertEquals(jetty.fields.size(), fields.size(), text);
        for (int i = 0; i < fields.size(); i++)
        {
            HttpField mine = fields.getField(i);
            HttpField theirs = jetty.fields.get(i);
            assertEquals(theirs.getHeader(), mine.getHeader(), text);
            // A name Jetty knows is spelt as Jetty spells it here; Jetty does so only when the line has a space after the colon.
            if (mine.getHeader() != null)
                assertTrue(theirs.getName().equalsIgnoreCase(mine.getName()), text);
            else
                assertEquals(theirs.getName(), mine.getName(), text);
            // Jetty takes a value that starts as one of its cached fields' does ("Keep-Alive") in the cached
            // field's case; the value as sent is kept here.
            HttpField cached = HttpParser.CACHE.getBest(theirs.getName() + ": " + mine.getValue());
            if (cached != null && mine.getValue().regionMatches(true, 0, cached.getValue(), 0, cached.getValue().length()))
                assertTrue(theirs.getValue().equalsIgnoreCase(mine.getValue()), text);
            else
                assertEquals(theirs.getValue(), mine.getValue(), text);
        }
    }

    private record Parsed(int status, HttpVersion version, List<HttpField> fields, long contentLength, int headLength, HttpException failure)
    {
    }

    /** The head as the link's Jetty parser reads it: the same parser, limit and compliance. */
    private static Parsed jetty(String text)
    {
        List<HttpField> fields = new ArrayList<>();
        int[] status = new int[1];
        HttpVersion[] version = new HttpVersion[1];
        boolean[] complete = new boolean[1];
        HttpException[] failure = new HttpException[1];
        HttpParser parser = new HttpParser(new HttpParser.ResponseHandler()
        {
            @Override
            public void startResponse(HttpVersion v, int s, String reason)
            {
                version[0] = v;
                status[0] = s;
            }

            @Override
            public void parsedHeader(HttpField field)
            {
                fields.add(field);
            }

            @Override
            public boolean headerComplete()
            {
                complete[0] = true;
                return true;
            }

            @Override
            public boolean content(ByteBuffer item)
            {
                return true;
            }

            @Override
            public boolean contentComplete()
            {
                return false;
            }

            @Override
            public boolean messageComplete()
            {
                return true;
            }

            @Override
            public void earlyEOF()
            {
            }

            @Override
            public void badMessage(HttpException x)
            {
                failure[0] = x;
            }
        }, Ingress.MAX_ANSWER_HEAD);
        ByteBuffer buffer = direct(text);
        try
        {
            parser.parseNext(buffer);
        }
        catch (HttpException.RuntimeException x)
        {
            failure[0] = x;
        }
        if (!complete[0])
            return new Parsed(status[0], version[0], null, -1, -1, failure[0]);
        return new Parsed(status[0], version[0], fields, parser.getContentLength(), buffer.position(), failure[0]);
    }

    private static ByteBuffer direct(String text)
    {
        byte[] bytes = text.getBytes(StandardCharsets.ISO_8859_1);
        return ByteBuffer.allocateDirect(bytes.length).put(bytes).flip();
    }
}
