package io.rlscheduler.master.internal.log;

import com.google.protobuf.ByteString;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.LogChunks;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes each attempt's log exactly once and in order. Sequence numbers are per attempt, from 1,
 * without gaps. For the task's current epoch a line is written only if its sequence number is one
 * above the last one written: lower numbers are duplicates (a worker resending after a reconnect)
 * and are skipped; a higher number is a gap, which ends the batch there (the worker resends from
 * the acknowledgement). Batches of an older epoch are stale (nothing written); a batch, start or
 * end of a newer epoch starts that attempt. Once the worker has said where the attempt ends, no
 * line beyond that is written; once it ended complete, none beyond its last.
 *
 * <p>An attempt's marker (and a new file's first line) goes into the file with its first line or
 * its end ({@link TaskLogState#marker}): an attempt that ends complete without a line, on a task
 * without a file, leaves none. Ending an attempt writes its end marker, closes the file and hands
 * it to {@link LogDurability}, which ends the followers once it is on disk, and to
 * {@link LogUploads}, which copies the whole file into the artifact store; so do lines that
 * still come after an incomplete end, so that the store's copy stays the whole file.
 *
 * <p>A task's file holds at most {@link LogSizeLimit its cap} of bytes before a cut marker: the
 * first output line that would take it past is not written, nor any later one of the task, of
 * any attempt; they are acknowledged all the same (the worker drops them), and an attempt whose
 * end is recorded ends at once, incomplete unless it printed nothing after the cut.
 *
 * <p>Confined to one I/O thread; works on the states that {@link LogStripe} gives it.
 */
final class AttemptSequencer {

    private static final Logger log = LoggerFactory.getLogger(AttemptSequencer.class);
    private static final long STALE = -1;

    private final LineEncoder out = new LineEncoder();
    private final LogFileWriter files;
    private final LogDurability durability;
    private final LinePatience patience;
    private final LogUploads uploads;
    private final LogSizeLimit sizeLimit;
    private final LogEvents events;

    AttemptSequencer(LogFileWriter files, LogDurability durability, LinePatience patience, LogUploads uploads,
                     LogSizeLimit sizeLimit, LogEvents events) {
        this.files = files;
        this.durability = durability;
        this.patience = patience;
        this.uploads = uploads;
        this.sizeLimit = sizeLimit;
        this.events = events;
    }

    /** Starts an attempt ({@link TaskLogManager#open}): an older epoch is stale, the same one changes nothing. */
    void open(TaskLogState st, String traceId, long epoch, int attempt) {
        if (epoch < st.epoch()) {
            log.debug("task {}: open for epoch {} older than {}: stale, ignored", st.taskId, epoch, st.epoch());
            return;
        }
        if (epoch > st.epoch()) {
            startAttempt(st, epoch, attempt, traceId);
        }
    }

    /** Writes a batch, as {@link TaskLogManager#write(String, long, long, List)} asks. */
    TaskLogManager.Written append(TaskLogState st, long epoch, long acknowledged, List<LogChunk> chunks)
            throws IOException {
        if (epoch < st.epoch()) {
            log.debug("task {}: log batch for epoch {} older than {}: stale, ignored", st.taskId, epoch, st.epoch());
            return new TaskLogManager.Written(STALE, false);
        }
        if (epoch > st.epoch()) {
            startAttempt(st, epoch, 0, LogFileFormat.UNKNOWN_TRACE_ID);
        }
        if (st.isCut()) {
            finishIfDue(st);
            return cutWritten(st, acknowledged, chunks);
        }
        if (acknowledged > st.lastSequence && st.phase() != LogPhase.ENDED && acknowledged <= sequenceLimit(st)) {
            skipAcknowledged(st, acknowledged);
        }
        if (!chunks.isEmpty()) {
            writeChunks(st, chunks);
        }
        finishIfDue(st);
        if (st.isCut()) {
            return cutWritten(st, acknowledged, chunks); // this batch met the cap
        }
        // Chunks ascend, so a batch with lines beyond a gap has its last chunk start beyond the
        // next line: writeChunks stopped there, short of the attempt's last line.
        boolean gap = !chunks.isEmpty() && st.phase() != LogPhase.ENDED
                && chunks.get(chunks.size() - 1).getFirstSequence() > st.lastSequence + 1
                && st.lastSequence < sequenceLimit(st);
        return new TaskLogManager.Written(st.lastSequence, gap);
    }

    /**
     * Records where the attempt's log ends, as {@link TaskLogManager#complete} asks: it ends
     * complete once it holds that line, or incomplete when the lines have not come within the
     * patience ({@link #giveUp}).
     */
    void complete(TaskLogState st, long epoch, long lastSequence, TaskState finalState) throws IOException {
        if (epoch < st.epoch()) {
            log.debug("task {}: completion for epoch {} older than {}: stale, ignored", st.taskId, epoch, st.epoch());
            return;
        }
        if (epoch > st.epoch()) {
            startAttempt(st, epoch, 0, LogFileFormat.UNKNOWN_TRACE_ID);
        }
        if (st.phase() == LogPhase.ENDED) {
            return;
        }
        st.expectEnd(lastSequence, finalState);
        finishIfDue(st);
        if (st.phase() == LogPhase.ENDING) {
            patience.waiting(st.taskId);
        }
    }

    /**
     * A completion whose last lines did not come within the patience: the attempt ends with the
     * lines it has, marked incomplete. Ignored unless the log still waits for them.
     */
    void giveUp(TaskLogState st) {
        if (st.phase() == LogPhase.ENDING) {
            end(st, st.pendingFinalState(), false, "the attempt's lines up to " + st.pendingEndSequence()
                    + " did not come within " + java.time.Duration.ofNanos(patience.patienceNanos())
                    + " of its end; the log holds lines up to " + st.lastSequence);
        }
    }

    /** Ends the attempt now, as {@link TaskLogManager#abandon} asks, marked incomplete; ignored once it ended. */
    void abandon(TaskLogState st, TaskState finalState, String note) {
        if (st.phase() != LogPhase.ENDED) {
            end(st, finalState, false, note);
        }
    }

    /**
     * Starts an attempt in memory. Its marker (and the file's first line, for a new file) goes
     * into the file with the attempt's first line or its end.
     */
    void startAttempt(TaskLogState st, long epoch, int attempt, String traceId) {
        st.startAttempt(epoch, attempt);
        st.marker = new TaskLogState.PendingMarker(traceId, 0);
    }

    /**
     * Writes a started attempt's pending marker before its state is dropped from the cache or the
     * manager closes: the file alone outlives the state, and the attempt's number and trace id
     * are not to be lost if it prints later. If that fails the state goes anyway: its lines then
     * come under a marker with attempt 0, as after a restart.
     */
    void writePendingMarker(TaskLogState st) {
        try {
            files.open(st);
            out.reset();
            pendingMarker(st);
            files.append(st, out);
            st.marker = null;
        } catch (IOException | RuntimeException e) {
            log.warn("task {}: cannot write the start of its attempt {} to its log: {}", st.taskId, st.attempt(),
                    e.toString());
        }
    }

    /**
     * Ends the current attempt: writes its end marker and closes the file, then has the file
     * forced and the followers ended ({@link LogDurability}). An attempt that ended complete
     * without a line, on a task with no file, has nothing to write or force: the task record says
     * how it ended (and that it printed nothing), which is what followers are told once this
     * state is gone ({@link RecordLookups}). An abandoned end is written even then: it carries
     * the reason, and it is rare.
     */
    void end(TaskLogState st, TaskState finalState, boolean complete, String note) {
        patience.ended(st.taskId);
        boolean written = false;
        boolean silent = complete && st.marker != null && st.length == 0;
        if (!silent) {
            try {
                files.open(st);
                if (st.phase() == LogPhase.ENDED) {
                    // Opening found the file changed by another master, which ended the attempt.
                    log.warn("task {}: its log file says its attempt ended already; not ending it again", st.taskId);
                    return;
                }
                out.reset();
                if (st.marker != null) {
                    pendingMarker(st);
                } else if (st.length == 0) {
                    out.line(LogFileFormat.header(LogFileFormat.UNKNOWN_TRACE_ID));
                }
                out.line(LogFileFormat.endMarker(finalState, complete, st.lastSequence, st.cutAt, note));
                files.append(st, out);
                st.marker = null;
                written = true;
            } catch (IOException e) {
                // The followers still get their END_OF_STREAM; only later ones may miss it.
                log.error("task {}: cannot write the end of its log: {}", st.taskId, e.toString());
            } finally {
                files.close(st);
            }
        }
        LogRecord endRecord = LogRecord.endOfStream(st.taskId, st.attempt(), st.epoch(), finalState, complete, note,
                st.cutAt);
        st.end(endRecord, complete ? st.lastSequence : st.sequenceLimit());
        List<LogFollower> ending = st.followers.isEmpty() ? List.of() : new ArrayList<>(st.followers);
        st.followers.clear();
        if (written) {
            durability.syncThenEnd(st.taskId, st.path, st.epoch(), endRecord, ending);
            uploads.ended(st.taskId, st.path);
        } else {
            for (LogFollower follower : ending) {
                follower.end(endRecord);
            }
        }
        attemptEnded(st, complete);
    }

    private void attemptEnded(TaskLogState st, boolean complete) {
        try {
            events.attemptEnded(st.taskId, st.epoch(), complete);
        } catch (RuntimeException e) {
            log.warn("task {}: the attempt end's listener failed: {}", st.taskId, e.toString());
        }
    }

    /**
     * What a batch of a cut log comes to: every line it holds is acknowledged, none written
     * beyond the cut, so the worker drops them and sends no more.
     */
    private static TaskLogManager.Written cutWritten(TaskLogState st, long acknowledged, List<LogChunk> chunks) {
        long last = Math.max(st.lastSequence, acknowledged);
        if (!chunks.isEmpty()) {
            LogChunk tail = chunks.get(chunks.size() - 1);
            last = Math.max(last, tail.getFirstSequence() + LogChunks.lineCount(tail.getText()) - 1);
        }
        return new TaskLogManager.Written(last, false, true);
    }

    /**
     * Lines up to {@code acknowledged} that this log lacks were acknowledged by another master
     * and are gone from the worker: goes on after them, under a marker that says so, written
     * with the next line (the attempt's first marker if none is in the file yet).
     */
    private void skipAcknowledged(TaskLogState st, long acknowledged) {
        log.warn("task {} epoch {}: lines {} to {} of its output are not in this master's log and were"
                + " acknowledged by another master (log directories not shared?); the log goes on after them",
                st.taskId, st.epoch(), st.lastSequence + 1, acknowledged);
        // The trace id is used only if the file does not exist yet.
        String traceId = st.marker == null ? LogFileFormat.UNKNOWN_TRACE_ID : st.marker.traceId();
        st.marker = new TaskLogState.PendingMarker(traceId, acknowledged);
        st.lastSequence = acknowledged;
    }

    /** The highest sequence number the attempt's log takes: its last once it ended or its worker said where it ends. */
    private static long sequenceLimit(TaskLogState st) {
        return st.phase() == LogPhase.ENDING ? Math.min(st.sequenceLimit(), st.pendingEndSequence())
                : st.sequenceLimit();
    }

    /** Ends an attempt whose recorded end is reached, or whose missing lines a cut keeps out. */
    private void finishIfDue(TaskLogState st) {
        if (st.phase() != LogPhase.ENDING) {
            return;
        }
        if (st.lastSequence >= st.pendingEndSequence()) {
            end(st, st.pendingFinalState(), true, null);
        } else if (st.isCut()) {
            end(st, st.pendingFinalState(), false, sizeLimit.note(st));
        }
    }

    /** Puts the current attempt's pending marker, and the first line of a new file, into the output. */
    private void pendingMarker(TaskLogState st) {
        if (st.marker == null) {
            return;
        }
        if (st.length == 0) {
            out.line(LogFileFormat.header(st.marker.traceId()));
        }
        out.line(LogFileFormat.attemptMarker(st.attempt(), st.epoch(), st.marker.after()));
    }

    /**
     * Writes the lines of {@code chunks} that come next (skipping those already written, up to
     * a gap, the attempt's last line, or the task's size cap, where it writes the cut marker)
     * with one write, then hands each chunk's written part to the live followers as one block of
     * file bytes.
     */
    private void writeChunks(TaskLogState st, List<LogChunk> chunks) throws IOException {
        // No line above the attempt's last: once it ended complete, or once its worker said
        // where it ends (a line beyond that cannot be the attempt's).
        if (!writesAny(st, chunks, sequenceLimit(st))) {
            return; // duplicates only, or beyond the end: leave a closed file closed
        }
        files.open(st);
        if (st.isCut()) {
            return; // opening read the file again, and another master had cut it
        }
        // Opening the file may have read it again (another master wrote to it): go on from there.
        long last = st.lastSequence;
        long limit = sequenceLimit(st);
        long room = sizeLimit.room(st);
        boolean full = false;
        out.reset();
        pendingMarker(st);
        List<LiveBlock> blocks = st.followers.isEmpty() ? null : new ArrayList<>(chunks.size());
        for (LogChunk chunk : chunks) {
            if (last >= limit) {
                break;
            }
            ByteString text = chunk.getText();
            int n = text.size();
            byte[] bytes = out.read(text);
            long first = chunk.getFirstSequence();
            int pos = 0;
            long skipped = 0;
            if (first <= last) { // lines this chunk repeats
                pos = out.skipLines(bytes, n, last - first + 1);
                skipped = out.linesSkipped();
            }
            if (pos == n) {
                continue;
            }
            if (first + skipped != last + 1) {
                break; // a gap: the worker resends from the acknowledgement
            }
            int blockStart = out.size();
            int lines = out.copyLines(bytes, pos, n, limit - last, room);
            if (blocks != null && lines > 0) {
                blocks.add(new LiveBlock(st.attempt(), st.epoch(), LiveBlock.streamOf(chunk.getStream()), last + 1, lines,
                        out.copy(blockStart, out.size()), st.length + blockStart));
            }
            last += lines;
            if (out.isFull()) {
                full = true;
                break;
            }
        }
        long cutAt = full ? sizeLimit.cutMarker(st, out) : -1;
        if (last == st.lastSequence && cutAt < 0) {
            return;
        }
        files.append(st, out);
        st.marker = null;
        st.lastSequence = last;
        if (cutAt >= 0) {
            sizeLimit.cut(st, cutAt);
        }
        if (blocks != null) {
            offerLive(st, blocks);
        }
        if (st.phase() == LogPhase.ENDED) {
            uploads.ended(st.taskId, st.path); // lines after an incomplete end: the store's copy lacks them
        }
    }

    private static boolean writesAny(TaskLogState st, List<LogChunk> chunks, long limit) {
        for (LogChunk chunk : chunks) {
            long first = chunk.getFirstSequence();
            if (first > st.lastSequence + 1) {
                return false; // a gap first
            }
            // The chunk reaches past the last line written (its line count is its LF count;
            // counted only for a chunk that starts at or below it, i.e. a resend).
            if (first == st.lastSequence + 1 || first + LogChunks.lineCount(chunk.getText()) - 1 > st.lastSequence) {
                return st.lastSequence + 1 <= limit;
            }
        }
        return false;
    }

    /** Hands the blocks to the live followers; one whose queue is full drops out, to read the file. */
    private static void offerLive(TaskLogState st, List<LiveBlock> blocks) {
        for (Iterator<LogFollower> it = st.followers.iterator(); it.hasNext();) {
            LogFollower follower = it.next();
            for (LiveBlock block : blocks) {
                if (!follower.offer(block)) {
                    it.remove();
                    break;
                }
            }
        }
    }
}
