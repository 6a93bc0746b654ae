package io.sandgate.testing;

import java.util.List;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import org.slf4j.LoggerFactory;

/**
 * The lines one of the gateway's loggers writes while this capture is open ({@code sandgate.access},
 * {@code sandgate.audit}): what an operator would read, for tests that check something was logged,
 * or that no secret was.
 */
public final class LogCapture implements AutoCloseable
{
    private final Logger logger;
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    public LogCapture(String logger)
    {
        this.logger = (Logger)LoggerFactory.getLogger(logger);
        appender.start();
        this.logger.addAppender(appender);
    }

    /** The access log's lines. */
    public static LogCapture accessLog()
    {
        return new LogCapture("sandgate.access");
    }

    /** The audit log's lines, one JSON object each. */
    public static LogCapture auditLog()
    {
        return new LogCapture("sandgate.audit");
    }

    /** The lines written so far, formatted. */
    public List<String> lines()
    {
        // The appender's list is written by the gateway's threads while a test reads it.
        synchronized (appender.list)
        {
            return appender.list.stream().map(ILoggingEvent::getFormattedMessage).toList();
        }
    }

    @Override
    public void close()
    {
        logger.detachAppender(appender);
    }
}
