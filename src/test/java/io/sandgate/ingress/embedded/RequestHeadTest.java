package io.sandgate.ingress.embedded;

import java.nio.charset.StandardCharsets;

import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.ArrayByteBufferPool;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.util.BufferUtil;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RequestHeadTest
{
    private static RetainableByteBuffer head(String method, String target, HttpFields fields, ByteBufferPool pool)
    {
        RequestHead head = RequestHead.start(method, target);
        fields.forEach(head::field);
        return head.finish(pool);
    }

    @Test
    void theHead_isTheRequestLineAndFields_withLineBreaksAsSpaces_inAPooledBufferThatGoesBack()
    {
        ArrayByteBufferPool.Tracking pool = new ArrayByteBufferPool.Tracking();
        HttpFields fields = HttpFields.build().add(HttpHeader.HOST, "10.0.0.7:6080").add("X-Odd", "a\r\nInjected: yes").add("X-Wide", "\u20ac");

        RetainableByteBuffer head = head("GET", "/app.js?v=1", fields, pool);

        assertEquals("GET /app.js?v=1 HTTP/1.1\r\nHost: 10.0.0.7:6080\r\nX-Odd: a  Injected: yes\r\nX-Wide: ?\r\n\r\n",
            BufferUtil.toString(head.getByteBuffer(), StandardCharsets.ISO_8859_1));
        assertEquals(1, pool.getLeaks().size(), "the head is the pool's until written");
        assertTrue(head.release());
        assertTrue(pool.getLeaks().isEmpty(), "released: " + pool.dumpLeaks());
    }

    @Test
    void latin1IsKeptAsItsByte_aNameAsItWasSpelt_andAHeadWithoutFieldsIsStillWhole()
    {
        ArrayByteBufferPool pool = new ArrayByteBufferPool();

        RetainableByteBuffer named = head("POST", "/", HttpFields.build().add("X-Name", "caf\u00e9")
            .add(new HttpField(HttpHeader.ACCEPT, "accept", "text/html")), pool);
        RetainableByteBuffer bare = head("GET", "/", HttpFields.EMPTY, pool);

        assertEquals("POST / HTTP/1.1\r\nX-Name: caf\u00e9\r\naccept: text/html\r\n\r\n", BufferUtil.toString(named.getByteBuffer(), StandardCharsets.ISO_8859_1),
            "a known name spelt otherwise than Jetty spells it goes as it was spelt");
        assertEquals("GET / HTTP/1.1\r\n\r\n", BufferUtil.toString(bare.getByteBuffer(), StandardCharsets.ISO_8859_1));
        named.release();
        bare.release();
    }

    @Test
    void aHeadLongerThanTheThreadsScratch_isWhole_andTheNextOnesHaveNothingOfIt()
    {
        ArrayByteBufferPool pool = new ArrayByteBufferPool();
        String cookie = "c=" + "x".repeat(5000);

        RetainableByteBuffer longHead = head("GET", "/a", HttpFields.build().add(HttpHeader.COOKIE, cookie), pool);
        RetainableByteBuffer nearlyFull = head("GET", "/" + "b".repeat(1500), HttpFields.EMPTY, pool);
        RetainableByteBuffer shortHead = head("GET", "/c", HttpFields.EMPTY, pool);

        assertEquals("GET /a HTTP/1.1\r\nCookie: " + cookie + "\r\n\r\n", BufferUtil.toString(longHead.getByteBuffer(), StandardCharsets.ISO_8859_1));
        assertEquals("GET /" + "b".repeat(1500) + " HTTP/1.1\r\n\r\n", BufferUtil.toString(nearlyFull.getByteBuffer(), StandardCharsets.ISO_8859_1));
        assertEquals("GET /c HTTP/1.1\r\n\r\n", BufferUtil.toString(shortHead.getByteBuffer(), StandardCharsets.ISO_8859_1));
        longHead.release();
        nearlyFull.release();
        shortHead.release();
    }

    /** A request line of any length around the thread's array, each field's edge and the blank line's included, is whole. */
    @Test
    void everyLengthAroundTheThreadsArray_isWhole()
    {
        ArrayByteBufferPool pool = new ArrayByteBufferPool();
        for (int length = 2000; length < 2100; length++)
        {
            String target = "/" + "t".repeat(length);
            RetainableByteBuffer lineOnly = head("GET", target, HttpFields.EMPTY, pool);
            RetainableByteBuffer withField = head("GET", "/" + "t".repeat(length - 40), HttpFields.build().add(HttpHeader.HOST, "10.0.0.7:6080"), pool);

            assertEquals("GET " + target + " HTTP/1.1\r\n\r\n", BufferUtil.toString(lineOnly.getByteBuffer(), StandardCharsets.ISO_8859_1));
            assertEquals("GET /" + "t".repeat(length - 40) + " HTTP/1.1\r\nHost: 10.0.0.7:6080\r\n\r\n",
                BufferUtil.toString(withField.getByteBuffer(), StandardCharsets.ISO_8859_1));
            lineOnly.release();
            withField.release();
        }
    }
}
