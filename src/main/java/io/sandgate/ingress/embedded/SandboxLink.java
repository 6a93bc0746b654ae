package io.sandgate.ingress.embedded;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import io.sandgate.ingress.Ingress;
import io.sandgate.ingress.SandboxHead.Body;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpException;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.ByteBufferPool;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.RetainableByteBuffer;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;

/**
 * One HTTP/1.1 connection to a sandbox, carrying one exchange at a time. It writes the request head
 * the ingress built, streams the browser's body after it, and relays the sandbox's answer as it is
 * parsed: the head through {@link Exchange#headers}, each piece of the body written to the browser
 * straight from this connection's read buffer, which is not read into again until the browser has
 * taken it. That is all a proxy needs of an HTTP client, without what Jetty's {@code HttpClient}
 * builds per exchange (request objects, listeners, a conversation, a content source with its own
 * demand). Its states are {@link LinkState}s.
 *
 * <p>Nothing it does with an answer waits (the browser's writes complete through callbacks), so the
 * selector that finds an answer readable parses and forwards it itself, without a hand-off to another
 * thread.</p>
 *
 * <p>Between exchanges it waits in its {@link SandboxLinks.Destination}, reading, so that a sandbox
 * closing an idle connection takes it out of the pool at once.</p>
 */
final class SandboxLink extends AbstractConnection.NonBlocking implements HttpParser.ResponseHandler
{
    /** What the link asks of the exchange it carries. */
    interface Exchange
    {
        Request request();

        Response response();

        /** The request line and header fields, ready to write, in a buffer of {@code pool}'s that the link releases once written. */
        RetainableByteBuffer head(ByteBufferPool pool);

        /** How the browser's body goes on: not at all, as it came (Content-Length), or chunked. */
        Body body();

        /** Copies the sandbox's status and header fields to the browser's response, through the policy; the fields are the link's, reused by its next answer. */
        void headers(int status, HttpFields fromSandbox);

        /** The browser has the whole answer. */
        void succeeded();

        /**
         * The exchange failed; the link is closed.
         *
         * @param retryable nothing was sent but the head, on a connection used before, and nothing
         *        came back: the sandbox closed the connection as it was taken, and another one may
         *        carry the request as if this one had never been tried
         */
        void failed(Throwable failure, boolean retryable);

        /** The browser closed its connection while the answer was awaited; the link is closed. */
        void browserGone();

        /** The answer's head is through and its length unknown (a stream): {@code cut} ends the exchange from any thread. */
        void streaming(Runnable cut);
    }

    /** Who parses on once a piece of body is handed to the browser: the parse loop if the browser took it at once, else the browser's callback. */
    private enum Piece { WRITING, TAKEN, WAITING }

    private final SandboxLinks.Destination destination;
    private final ByteBufferPool pool;
    /** The connector's selector this link is on, whose idle links its destination keeps apart. */
    private final int lane;
    /** When this link last went idle in its pool, by {@link System#nanoTime()}; read and written under the destination's lock. */
    long idleSince;

    /** Reads every answer, head and body; its limit on the head makes a longer one a bad answer. */
    private final HttpParser parser = new HttpParser(this, Ingress.MAX_ANSWER_HEAD);
    private final LinkState.Machine life = new LinkState.Machine();
    private final AtomicReference<Piece> piece = new AtomicReference<>(Piece.TAKEN);
    private final Callback written = Callback.from(this::browserTook, this::browserFailed);
    private RetainableByteBuffer buffer;
    /** The exchange being parsed; the one {@link #life} carries until it ends. */
    private Exchange exchange;
    /** The answer's fields, kept for the next answer: the browser's response takes a copy of them at once. */
    private final HttpFields.Mutable fromSandbox = HttpFields.build();
    private int status;
    private boolean keepAlive;
    /** The connection carried an exchange before: the sandbox may have closed it as it was taken. */
    private boolean reused;
    /** Some of the answer came back: the exchange cannot go again elsewhere as if untried. */
    private boolean received;
    /** The browser was handed the answer's last piece as such, and needs no empty last write. */
    private boolean lastWritten;
    /** Set when a piece of body was handed to the browser during a parse; only the thread parsing reads and clears it. */
    private boolean wrote;
    /** Set by the parser at the end of a message; the parse loop takes it. */
    private boolean messageDone;
    private final BrowserWatch browser = new BrowserWatch();
    /** What streams the body of the exchange carried; null for one without a body. */
    private volatile BodyPump pump;

    /**
     * The endpoint's idle timeout is the exchange's, {@code ingress.idle-timeout}, set once: changing
     * it between exchanges would cancel and schedule a timer twice per request. A link waiting in
     * its pool is closed by the pool's sweep instead ({@link SandboxLinks}).
     */
    SandboxLink(EndPoint endPoint, Executor executor, SandboxLinks.Destination destination, ByteBufferPool pool)
    {
        super(endPoint, executor);
        // As Jetty's client reads answers: a 1 MB body goes to the browser in pieces of this size.
        setInputBufferSize(16 * 1024);
        this.destination = destination;
        this.pool = pool;
        this.lane = Math.max(0, IngressConnector.lane(endPoint));
    }

    int lane()
    {
        return lane;
    }

    @Override
    public void onOpen()
    {
        super.onOpen();
        fillInterested();
    }

    /** Carries an exchange: this link was idle or just opened, and reads already. */
    void send(Exchange next)
    {
        RetainableByteBuffer head;
        try
        {
            head = next.head(pool);
        }
        catch (RuntimeException x)
        {
            // Nothing was sent: the link is as it was, idle and reading, and goes back for the next exchange.
            next.failed(x, false);
            destination.release(this);
            return;
        }
        exchange = next;
        status = 0;
        received = false;
        lastWritten = false;
        Body body = next.body();
        parser.reset();
        parser.setHeadResponse("HEAD".equals(next.request().getMethod()));
        BodyPump bodyPump = body == Body.NONE ? null : new BodyPump(this, getEndPoint(), next, body == Body.CHUNKED);
        pump = bodyPump;
        if (life.move(next, LinkState.Event.SEND) == null)
        {
            // Closed as it was taken from its pool: the exchange fails as a write on the closed connection would, untried.
            pump = null;
            head.release();
            next.failed(new ClosedChannelException(), reused);
            return;
        }
        if (bodyPump == null)
            watchBrowser(next);
        getEndPoint().write(Callback.from(() ->
        {
            head.release();
            if (bodyPump == null)
                requestSent(next);
            else
                bodyPump.iterate();
        }, x ->
        {
            head.release();
            fail(next, x);
        }), head.getByteBuffer());
    }

    @Override
    public void onFillable()
    {
        if (!life.state().awaitsAnswer())
        {
            idleFillable();
            return;
        }
        readAndParse();
    }

    /** Bytes or the end of the stream from a sandbox that is asked nothing: either way, the connection is done. */
    private void idleFillable()
    {
        RetainableByteBuffer probe = pool.acquire(64, false);
        try
        {
            if (getEndPoint().fill(probe.getByteBuffer()) == 0)
            {
                fillInterested();
                return;
            }
        }
        catch (Throwable x)
        {
            // Closed below.
        }
        finally
        {
            probe.release();
        }
        if (destination.takeBack(this))
            close();
        else
            // An exchange took it meanwhile: it reads the end of the stream and retries.
            fillInterested();
    }

    private void readAndParse()
    {
        try
        {
            while (true)
            {
                if (buffer == null)
                    buffer = pool.acquire(getInputBufferSize(), true);
                Next next = parse();
                if (next != Next.READ)
                {
                    if (next == Next.FAILED)
                        discardBuffer();
                    return;
                }
                int filled = getEndPoint().fill(buffer.getByteBuffer());
                if (filled > 0)
                {
                    received = true;
                    continue;
                }
                if (filled == 0)
                {
                    releaseBuffer();
                    fillInterested();
                    return;
                }
                parser.atEOF();
                Next last = parse();
                if (last == Next.READ)
                    fail(exchange, new EOFException("the sandbox closed the connection"));
                if (last == Next.READ || last == Next.FAILED)
                    discardBuffer();
                return;
            }
        }
        catch (IOException x)
        {
            fail(exchange, x);
            discardBuffer();
        }
        catch (Throwable x)
        {
            // The parser's refusal of what the sandbox sent (a header over its limit, say; with
            // assertions on, Jetty asserts on the status it gives such a refusal): a bad answer.
            fail(exchange, new IOException("the sandbox's answer could not be read", x));
            discardBuffer();
        }
    }

    /**
     * What the parse loop does after a parse. Whoever runs the loop owns the buffer and the parser,
     * and hands them on by {@link #BROWSER} or {@link #DONE}, after which it touches neither.
     */
    private enum Next
    {
        /** Read more of the answer. */
        READ,
        /** A piece of body is with the browser, which did not take it at once: its callback parses on, perhaps already. */
        BROWSER,
        /** The answer is whole: the link may already carry the next exchange. */
        DONE,
        /** The exchange failed: the buffer's bytes are no one's. */
        FAILED
    }

    /** Parses what the buffer holds. */
    private Next parse()
    {
        ByteBuffer bytes = buffer.getByteBuffer();
        while (true)
        {
            boolean stop = parser.parseNext(bytes);
            if (wrote)
            {
                wrote = false;
                // The last step of this thread's part: from here the browser's callback owns the parse.
                if (piece.compareAndSet(Piece.WRITING, Piece.WAITING))
                    return Next.BROWSER;
                // The browser took it at once, or refused it: parse on, or see the failure below.
            }
            if (!life.carries(exchange))
                return Next.FAILED;
            if (messageDone)
            {
                messageDone = false;
                if (status < 200)
                {
                    // An interim answer (100 Continue, 103 Early Hints): the browser gets the final one.
                    parser.reset();
                    continue;
                }
                complete();
                return Next.DONE;
            }
            if (!stop)
                return Next.READ;
        }
    }

    @Override
    public void startResponse(HttpVersion version, int status, String reason)
    {
        this.status = status;
        keepAlive = version == HttpVersion.HTTP_1_1;
        // Neither the last exchange's fields nor an interim answer's (a 103's Link) are this answer's.
        fromSandbox.clear();
    }

    @Override
    public void parsedHeader(HttpField field)
    {
        HttpHeader header = field.getHeader();
        if (header == HttpHeader.CONTENT_LENGTH && parser.getContentLength() >= 0)
            // The length as the parser read it: the server looks at it three times as it writes the response.
            field = new HttpField.LongValueHttpField(header, field.getName(), field.getValue(), parser.getContentLength());
        else if (header == HttpHeader.CONNECTION && field.contains("close"))
            keepAlive = false;
        fromSandbox.add(field);
    }

    @Override
    public boolean headerComplete()
    {
        if (status < 200)
            return false;
        exchange.headers(status, fromSandbox);
        if (parser.getContentLength() < 0)
        {
            Exchange streaming = exchange;
            streaming.streaming(() -> cut(streaming));
        }
        return false;
    }

    @Override
    public boolean content(ByteBuffer content)
    {
        long length = parser.getContentLength();
        lastWritten = length >= 0 && parser.getContentRead() == length;
        // Once the browser has the whole answer it may close at once: that is no departure.
        if (lastWritten)
            browser.forget();
        piece.set(Piece.WRITING);
        exchange.response().write(lastWritten, content, written);
        wrote = true;
        // The parse stops here: parse() then waits for the browser, or parses on if it took the piece at once.
        return true;
    }

    private void browserTook()
    {
        // Taken before the parse asked to wait: the parse goes on by itself.
        if (piece.compareAndSet(Piece.WRITING, Piece.TAKEN))
            return;
        piece.set(Piece.TAKEN);
        readAndParse();
    }

    private void browserFailed(Throwable x)
    {
        if (piece.compareAndSet(Piece.WRITING, Piece.TAKEN))
        {
            // Refused before the parse asked to wait: the parse sees the failure and discards the buffer.
            fail(exchange, x);
            return;
        }
        piece.set(Piece.TAKEN);
        fail(exchange, x);
        discardBuffer();
    }

    @Override
    public boolean contentComplete()
    {
        return false;
    }

    @Override
    public boolean messageComplete()
    {
        messageDone = true;
        return true;
    }

    @Override
    public void earlyEOF()
    {
        // parse() sees an incomplete message at the end of the stream and fails the exchange.
    }

    @Override
    public void badMessage(HttpException failure)
    {
        fail(exchange, new IOException("the sandbox's answer is not HTTP: " + failure.getReason()));
    }

    /**
     * The sandbox's answer is whole: the browser gets the end, and the link goes back to its
     * destination once the request is sent too (the answer may be read before the selector has
     * reported the request's last write), or closes if it cannot carry another: an answer that says
     * so, bytes after it, or an answer ahead of a request body still on its way.
     */
    private void complete()
    {
        Exchange done = exchange;
        browser.forget();
        boolean requestSent = life.state() == LinkState.AWAITING_ANSWER;
        boolean reusable = keepAlive && !buffer.hasRemaining() && (requestSent || done.body() == Body.NONE);
        if (reusable)
            releaseBuffer();
        else
            // Bytes past the answer are no one's: the link closes.
            discardBuffer();
        // Read before the move: once the link is free another exchange may set them.
        boolean last = lastWritten;
        exchange = null;
        LinkState.Step was = life.move(done, reusable ? LinkState.Event.ANSWER_WHOLE : LinkState.Event.ENDED);
        if (was == null)
            return;
        stopPump(done);
        if (!reusable)
        {
            destination.takeBack(this);
            close();
        }
        else if (was.state().after(LinkState.Event.ANSWER_WHOLE) == LinkState.IDLE)
        {
            reuse();
        }
        if (last)
            done.succeeded();
        else
            done.response().write(true, BufferUtil.EMPTY_BUFFER, Callback.from(done::succeeded, x -> done.failed(x, false)));
    }

    /** The pump has read a piece of the browser's body, which goes to the sandbox now: the exchange can no longer go again elsewhere. */
    void bodyStarted(Exchange sending)
    {
        life.move(sending, LinkState.Event.BODY_STARTED);
    }

    /** The request's last write is reported. */
    void requestSent(Exchange sent)
    {
        LinkState.Step was = life.move(sent, LinkState.Event.REQUEST_SENT);
        if (was != null && was.state() == LinkState.ANSWERED)
            reuse();
    }

    private void reuse()
    {
        reused = true;
        fillInterested();
        destination.release(this);
    }

    /** Ends {@code failed}, or whichever exchange is carried if null, with {@code failure}, if its answer is still awaited; the link closes. */
    void fail(Exchange failed, Throwable failure)
    {
        LinkState.Step was = life.move(failed, LinkState.Event.ENDED);
        if (was == null)
            return;
        Exchange ended = was.exchange();
        // Nothing went but the head, on a connection used before, and nothing came back: see Exchange#failed.
        boolean headOnly = was.state() == LinkState.SENDING_HEAD || was.state() == LinkState.AWAITING_ANSWER && ended.body() == Body.NONE;
        boolean retryable = reused && !received && headOnly;
        browser.forget();
        destination.takeBack(this);
        close();
        stopPump(ended);
        ended.failed(failure, retryable);
    }

    /** The browser of {@code gone} left before its answer was whole: the sandbox's connection closes, and the request goes nowhere else. */
    private void browserGone(Exchange gone)
    {
        if (life.move(gone, LinkState.Event.ENDED) == null)
            return;
        destination.takeBack(this);
        close();
        stopPump(gone);
        gone.browserGone();
    }

    /** Ends a stream whose access no longer stands, if this link still carries it. */
    private void cut(Exchange stream)
    {
        fail(stream, new IOException("access to the sandbox was revoked, or its pod replaced, while its answer streamed"));
    }

    /** Watches the browser of {@code watched} while its answer is awaited: a browser that leaves ends the exchange at once ({@link BrowserWatch}). */
    void watchBrowser(Exchange watched)
    {
        Runnable gone = () -> browserGone(watched);
        KeptReadEndPoint endPoint = browser.watch(watched.request(), gone);
        // The answer may have been read whole while the body's last piece came, and the browser forgotten before it was watched.
        if (endPoint != null && !life.carries(watched))
            endPoint.clearPeerGone(gone);
    }

    /** Stops the body pump of {@code ended}, which is no longer carried, before the server hears that the exchange ended ({@link BodyPump#stop}). */
    private void stopPump(Exchange ended)
    {
        BodyPump stopping = pump;
        if (stopping != null && stopping.owner() == ended)
        {
            stopping.stop();
            // An idle link keeps no ended request.
            pump = null;
        }
    }

    @Override
    public boolean onIdleExpired(TimeoutException timeout)
    {
        if (!life.state().awaitsAnswer())
            destination.takeBack(this);
        else
            fail(null, timeout);
        return true;
    }

    @Override
    public void onClose(Throwable cause)
    {
        super.onClose(cause);
        fail(null, cause != null ? cause : new ClosedChannelException());
        life.move(null, LinkState.Event.CONNECTION_CLOSED);
        destination.closed(this);
    }

    private void releaseBuffer()
    {
        if (buffer != null && !buffer.hasRemaining())
        {
            buffer.release();
            buffer = null;
        }
    }

    /**
     * Gives the read buffer back whatever it still holds, once the exchange has failed or the link
     * closes with bytes unread. Only the parse's owner calls it ({@link Next}): another thread
     * releasing it could hand the pool a buffer whose bytes are still being written to a browser,
     * or parsed, for another exchange to overwrite. A link waiting to read holds no buffer: the
     * parser has taken in all it read, and the loop released it.
     */
    private void discardBuffer()
    {
        if (buffer != null)
        {
            buffer.release();
            buffer = null;
        }
    }
}
