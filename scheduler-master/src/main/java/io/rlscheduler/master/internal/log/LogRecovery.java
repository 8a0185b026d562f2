package io.rlscheduler.master.internal.log;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogRecord;
import java.io.IOException;
import java.nio.file.Files;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Rebuilds a task's log state from its file. The file is the only durable state of a log
 * (besides the task record's line count, which stands for the file an attempt that printed
 * nothing does not have): the last attempt marker gives the current epoch and attempt, the
 * output lines after it the last sequence written, an end marker after it says the attempt
 * ended, and a cut marker that the log reached the task's size limit. A last line without LF
 * (cut short by a crash, so never acknowledged; or being written by another master sharing the
 * directory) is not read: this master cuts it off when it appends next, and the worker resends it. What only
 * memory holds and the file cannot yet (an attempt started here whose marker is not written, a
 * completion waiting for its last lines) is carried over.
 *
 * <p>It runs the first time a task is touched after the manager was created (a restarted master,
 * a standby taking over) or after its state was dropped from the cache, after an I/O error, and
 * when another master sharing the directory changed the file.
 */
final class LogRecovery {

    private static final Logger log = LoggerFactory.getLogger(LogRecovery.class);

    private LogRecovery() {
    }

    /**
     * Reads the state again from its file. The task's file must not be open for writing. Live
     * followers are detached: they read what they may have missed from the file and attach
     * again. If it fails the state stays marked to be read again.
     */
    static void recover(TaskLogState st) throws IOException {
        st.needsRecovery = true;
        for (LogFollower follower : st.followers) {
            follower.detach();
        }
        st.followers.clear();
        long pendingEpoch = st.epoch();
        int pendingAttempt = st.attempt();
        TaskLogState.PendingMarker pendingMarker = st.marker;
        boolean wasEnding = st.phase() == LogPhase.ENDING;
        long pendingSequence = st.pendingEndSequence();
        TaskState pendingState = st.pendingFinalState();
        LogRecord silentEnd = pendingMarker != null && st.phase() == LogPhase.ENDED && st.endRecord().isComplete()
                ? st.endRecord() : null;
        st.forget();
        st.length = 0;
        st.incompleteTail = 0;
        st.cutAt = -1;
        // java.io.File.exists: Files.exists throws (and catches) an exception for a missing
        // file, which is what every new task's first touch finds. It follows links; a dangling
        // link then counts as missing and the write that comes next refuses it (NOFOLLOW_LINKS).
        if (st.path.toFile().exists()) {
            readFile(st);
        }
        if (pendingMarker != null && pendingEpoch > st.epoch()) {
            // An attempt started here whose marker is not written yet: the file cannot hold it.
            st.startAttempt(pendingEpoch, pendingAttempt);
            st.marker = new TaskLogState.PendingMarker(pendingMarker.traceId(), 0);
            if (silentEnd != null) {
                st.end(silentEnd, 0);
            }
        }
        if (pendingMarker != null && pendingMarker.after() > st.lastSequence && st.epoch() == pendingEpoch
                && st.phase() != LogPhase.ENDED) {
            // A skip past lines another master acknowledged, not in the file yet: still due.
            String traceId = pendingMarker.traceId() == null ? LogFileFormat.UNKNOWN_TRACE_ID : pendingMarker.traceId();
            st.marker = new TaskLogState.PendingMarker(traceId, pendingMarker.after());
            st.lastSequence = pendingMarker.after();
        }
        if (wasEnding && st.epoch() == pendingEpoch && st.phase() != LogPhase.ENDED) {
            st.expectEnd(pendingSequence, pendingState);
        }
        st.needsRecovery = false;
    }

    /** Reads the file into the state (forgotten before), and cuts off a last line without LF. */
    private static void readFile(TaskLogState st) throws IOException {
        LogCursor cursor = new LogCursor();
        boolean started = false;
        LogRecord end = null;
        long limit = Long.MAX_VALUE;
        long lines = 0;
        try (LogLineReader reader = LogLineReader.open(st.path, 0)) {
            for (String line = reader.next(Long.MAX_VALUE); line != null; line = reader.next(Long.MAX_VALUE)) {
                LogFileFormat.Line parsed = LogFileFormat.parse(line, lines == 0);
                lines++;
                cursor.advance(parsed);
                switch (parsed.kind()) {
                    case ATTEMPT -> {
                        started = true;
                        end = null;
                        limit = Long.MAX_VALUE;
                    }
                    case END -> {
                        end = cursor.endRecord(st.taskId, parsed);
                        limit = parsed.complete() ? parsed.last() : Long.MAX_VALUE;
                    }
                    case CUT -> st.cutAt = parsed.cutAt();
                    default -> {
                        // an output line (counted by the cursor), or the header
                    }
                }
            }
            st.length = reader.consumed();
        }
        if (started) {
            st.startAttempt(cursor.epoch(), cursor.attempt());
        }
        st.lastSequence = cursor.sequence();
        if (end != null) {
            st.end(end, limit);
        }
        long size = Files.size(st.path);
        // Cut off only when this master appends (LogFileWriter.open): another master may be writing it.
        st.incompleteTail = Math.max(0, size - st.length);
        log.debug("task {}: log state read from {}: {} lines, epoch {}, attempt {}, last sequence {}{}",
                st.taskId, st.path, lines, st.epoch(), st.attempt(), st.lastSequence,
                st.phase() == LogPhase.ENDED ? ", ended" : "");
    }
}
