package io.rlscheduler.master;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.LoggerFactory;

/**
 * Takes over the log events of some loggers (they are counted, not printed: a fuzz run logs a
 * warning per refused frame) and keeps the first ERROR events whole. Close it to give the loggers
 * back; closing again does nothing more. Thread-safe.
 */
final class LogTally extends AppenderBase<ILoggingEvent> implements AutoCloseable {

    private static final int KEPT = 20;

    private final List<Logger> loggers = new ArrayList<>();
    private final List<Boolean> additive = new ArrayList<>();
    private final Map<String, Integer> counts = new TreeMap<>();
    private final List<String> errors = new ArrayList<>();

    /** Starts counting the events of the named loggers (and their children) instead of printing them. */
    static LogTally of(String... loggerNames) {
        LogTally tally = new LogTally();
        tally.start();
        for (String name : loggerNames) {
            Logger logger = (Logger) LoggerFactory.getLogger(name);
            tally.loggers.add(logger);
            tally.additive.add(logger.isAdditive());
            logger.addAppender(tally);
            logger.setAdditive(false);
        }
        return tally;
    }

    @Override
    protected synchronized void append(ILoggingEvent event) {
        counts.merge(event.getLevel() + " " + event.getLoggerName(), 1, Integer::sum);
        if (event.getLevel() == Level.ERROR && errors.size() < KEPT) {
            errors.add(event.getLoggerName() + ": " + event.getFormattedMessage()
                    + (event.getThrowableProxy() == null ? "" : " (" + event.getThrowableProxy().getClassName() + ": "
                    + event.getThrowableProxy().getMessage() + ")"));
        }
    }

    /** Returns the number of events per "LEVEL logger". */
    synchronized Map<String, Integer> counts() {
        return new TreeMap<>(counts);
    }

    /** Returns the first 20 ERROR events, each with its logger. */
    synchronized List<String> errors() {
        return List.copyOf(errors);
    }

    @Override
    public synchronized void close() {
        for (int i = 0; i < loggers.size(); i++) {
            loggers.get(i).detachAppender(this);
            loggers.get(i).setAdditive(additive.get(i));
        }
        loggers.clear();
        additive.clear();
        stop();
    }
}
