package io.sandgate.ingress;

import java.util.List;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

/**
 * The gateway's access log lines, as written while this capture is open: what an operator would read,
 * for tests that check a request was logged, or that no secret was.
 */
final class AccessLogCapture implements AutoCloseable
{
    private final Logger access = (Logger)LoggerFactory.getLogger("sandgate.access");
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    AccessLogCapture()
    {
        appender.start();
        access.addAppender(appender);
    }

    /** The lines written so far, formatted. */
    List<String> lines()
    {
        return appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
    }

    @Override
    public void close()
    {
        access.detachAppender(appender);
    }
}
