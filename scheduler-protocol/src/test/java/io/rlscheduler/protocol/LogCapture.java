package io.rlscheduler.protocol;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.util.List;
import java.util.stream.Collectors;
import org.slf4j.LoggerFactory;

/** Captures the log events of one logger for assertions; close it to detach. */
final class LogCapture implements AutoCloseable {

    private final Logger logger;
    private final Level previousLevel;
    private final boolean previousAdditive;
    private final ListAppender<ILoggingEvent> appender = new ListAppender<>();

    private LogCapture(Class<?> loggerClass, Level level) {
        this.logger = (Logger) LoggerFactory.getLogger(loggerClass);
        this.previousLevel = logger.getLevel();
        this.previousAdditive = logger.isAdditive();
        logger.setLevel(level);
        logger.setAdditive(false); // captured events are asserted, not printed
        appender.start();
        logger.addAppender(appender);
    }

    /** Captures events of {@code loggerClass}'s logger at {@code level} and above. */
    static LogCapture of(Class<?> loggerClass, Level level) {
        return new LogCapture(loggerClass, level);
    }

    /** Returns the formatted messages captured at exactly {@code level}. */
    synchronized List<String> messages(Level level) {
        return appender.list.stream()
                .filter(e -> e.getLevel() == level)
                .map(ILoggingEvent::getFormattedMessage)
                .collect(Collectors.toList());
    }

    @Override
    public void close() {
        logger.detachAppender(appender);
        logger.setLevel(previousLevel);
        logger.setAdditive(previousAdditive);
        appender.stop();
    }
}
