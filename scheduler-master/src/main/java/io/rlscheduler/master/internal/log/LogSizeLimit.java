package io.rlscheduler.master.internal.log;

import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The cap on one task's log file ({@link TaskLogManager.Limits#maxLogBytes()}): how many bytes a
 * write may still add, the cut marker that ends the task's output in the file when the next line
 * would go past it, and telling of each cut ({@link LogEvents#logCut}, and a count for health).
 * The cap is per task, over all its attempts: the file's length is what it measures, so recovery
 * needs nothing beyond the file (its cut marker). Thread-safe; the states it is given are confined
 * to their I/O thread.
 */
final class LogSizeLimit {

    private static final Logger log = LoggerFactory.getLogger(LogSizeLimit.class);

    private final long maxBytes;
    private final LogEvents events;
    private final AtomicLong cuts = new AtomicLong();

    LogSizeLimit(long maxBytes, LogEvents events) {
        this.maxBytes = maxBytes;
        this.events = events;
    }

    /**
     * Returns the most bytes a write at the end of the task's file may hold in all, markers
     * included, without its output lines taking the file past the cap; negative when the file is
     * there already (markers are written regardless).
     */
    long room(TaskLogState st) {
        return maxBytes - st.length;
    }

    /**
     * Puts the cut marker into {@code out}, after what it holds; returns where it starts in the
     * file: the bytes the log keeps, at most the cap unless markers alone took it past.
     */
    long cutMarker(TaskLogState st, LineEncoder out) {
        long at = st.length + out.size();
        out.line(LogFileFormat.cutMarker(at, maxBytes));
        return at;
    }

    /**
     * Records a cut whose marker was written at byte {@code at}, and tells of it. On the I/O
     * thread, after the write.
     */
    void cut(TaskLogState st, long at) {
        st.cutAt = at;
        cuts.incrementAndGet();
        log.warn("task {}: its log reached the limit of {} bytes per task at {} bytes and is cut; its later lines"
                + " are acknowledged and dropped", st.taskId, maxBytes, at);
        try {
            events.logCut(st.taskId, st.epoch(), at);
        } catch (RuntimeException e) {
            log.warn("task {}: the log cut's listener failed: {}", st.taskId, e.toString());
        }
    }

    /** Returns the note of an attempt's end whose lines after the cut were not kept. */
    String note(TaskLogState st) {
        return "the log was cut at " + st.cutAt + " bytes, the limit of " + maxBytes
                + " bytes per task: the lines after it were not kept";
    }

    /** Returns how many cuts were written since the manager started. */
    long cuts() {
        return cuts.get();
    }
}
