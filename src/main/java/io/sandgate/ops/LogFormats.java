package io.sandgate.ops;

import java.util.Iterator;
import java.util.Map;
import java.util.WeakHashMap;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.JsonEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.encoder.Encoder;
import io.sandgate.config.SandgateConfig;
import org.slf4j.LoggerFactory;

/**
 * Applies {@code log.format} to the logging set up by {@code logback.xml} (the packaged one or the
 * operator's): in JSON every console or file appender writes logback's own JSON lines instead of
 * its pattern, in text it writes its pattern again. The appenders, their targets and levels stay
 * as configured, so the text lines are exactly those of the pattern.
 */
public final class LogFormats
{
    /** The audit log writes JSON of its own; wrapping it again would quote every line. */
    private static final String AUDIT = "sandgate.audit";
    /** Each appender's pattern encoder while JSON replaces it, to go back to text. */
    private static final Map<OutputStreamAppender<ILoggingEvent>, Encoder<ILoggingEvent>> TEXT = new WeakHashMap<>();

    private LogFormats()
    {
    }

    /** Switches every appender to {@code format}; does nothing when logging is not logback (a WAR with its own binding). */
    public static synchronized void use(SandgateConfig.LogFormat format)
    {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext context))
            return;
        for (ch.qos.logback.classic.Logger logger : context.getLoggerList())
        {
            if (logger.getName().equals(AUDIT))
                continue;
            for (Iterator<Appender<ILoggingEvent>> it = logger.iteratorForAppenders(); it.hasNext();)
            {
                if (it.next() instanceof OutputStreamAppender<ILoggingEvent> appender)
                    use(appender, format, context);
            }
        }
    }

    private static void use(OutputStreamAppender<ILoggingEvent> appender, SandgateConfig.LogFormat format, LoggerContext context)
    {
        Encoder<ILoggingEvent> current = appender.getEncoder();
        if (format == SandgateConfig.LogFormat.JSON && !(current instanceof JsonEncoder))
        {
            TEXT.put(appender, current);
            appender.setEncoder(json(context));
        }
        else if (format == SandgateConfig.LogFormat.TEXT && current instanceof JsonEncoder)
        {
            Encoder<ILoggingEvent> text = TEXT.remove(appender);
            if (text != null)
                appender.setEncoder(text);
        }
    }

    /**
     * Logback's encoder, cut to what a reader needs: time, level, thread, logger, the formatted
     * message, the request's fields ({@code mdc}), an event's own fields ({@code kvpList}) and
     * the stack trace. Not the raw template and arguments, which repeat the message.
     */
    public static JsonEncoder json(LoggerContext context)
    {
        JsonEncoder encoder = new JsonEncoder();
        encoder.setContext(context);
        encoder.setWithSequenceNumber(false);
        encoder.setWithNanoseconds(false);
        encoder.setWithContext(false);
        encoder.setWithMessage(false);
        encoder.setWithFormattedMessage(true);
        encoder.setWithArguments(false);
        encoder.start();
        return encoder;
    }
}
