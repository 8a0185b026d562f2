package io.rlscheduler.worker.internal;

import com.google.protobuf.UnsafeByteOperations;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.LogStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The output lines of one attempt that the master has not yet acknowledged. Lines get sequence
 * numbers 1, 2, 3, ... in the order they are added; they are kept as the blocks they were added
 * in ({@link LineBlock}, one {@link LogChunk} each), until a {@code LogAck} covers a block's last
 * line; after a reconnect everything unacknowledged is sent again (the master skips what it
 * already has, also inside a block). Bounded: while {@code capacity} lines or more wait
 * unacknowledged, {@link #add} blocks the reading thread, which in turn blocks the task's writes
 * to its pipe: back-pressure instead of loss. Once the master says it cut the task's log
 * ({@link #cut}), lines are counted and dropped as they come. Thread-safe.
 */
public final class LogBuffer {

    /** A block of lines as it is sent, and the sequence number of its last line. */
    private record Entry(LogChunk chunk, long last, int lines, int bytes) {
    }

    private final String taskId;
    private final long epoch;
    private final int capacity;
    private final ArrayDeque<Entry> unacked = new ArrayDeque<>();
    /**
     * The tail of {@link #unacked} not yet sent on the current connection, so a batch is taken
     * from its head instead of walking past every block sent but not yet acknowledged.
     */
    private final ArrayDeque<Entry> unsent = new ArrayDeque<>();
    private long unackedLines;
    private long unsentLines;
    private long unsentBytes;
    private long lastSequence;
    private long ackedSequence;
    private boolean closed;
    private boolean sealed;
    private long droppedAfterSeal;
    private boolean cut;
    private long droppedAfterCut;

    public LogBuffer(String taskId, long epoch, int capacity) {
        this.taskId = taskId;
        this.epoch = epoch;
        this.capacity = capacity;
    }

    public String getTaskId() {
        return taskId;
    }

    public long getEpoch() {
        return epoch;
    }

    /**
     * Adds one line (CR and LF inside it become spaces); blocks while the buffer is full.
     *
     * @return how many lines now wait to be sent on the current connection
     */
    public long add(LogStream stream, String text) throws InterruptedException {
        return add(stream, LineBlock.of(text));
    }

    /**
     * Adds a block of lines; blocks while the buffer is full (until acknowledged, closed or
     * sealed). The block is kept as it is, not copied. Once {@link #seal sealed}, drops the lines.
     *
     * @return how many lines now wait to be sent on the current connection
     */
    public synchronized long add(LogStream stream, LineBlock lines) throws InterruptedException {
        while (unackedLines >= capacity && !closed) {
            wait(200);
        }
        if (sealed) {
            droppedAfterSeal += lines.lineCount();
            return unsentLines;
        }
        if (cut) {
            // Numbered still, so that the attempt's end names its last line; kept by nobody.
            lastSequence += lines.lineCount();
            ackedSequence = lastSequence;
            droppedAfterCut += lines.lineCount();
            return unsentLines;
        }
        LogChunk chunk = LogChunk.newBuilder().setFirstSequence(lastSequence + 1).setStream(stream)
                .setTimestampUnixMs(System.currentTimeMillis())
                .setText(UnsafeByteOperations.unsafeWrap(lines.array(), 0, lines.length())).build();
        lastSequence += lines.lineCount();
        Entry entry = new Entry(chunk, lastSequence, lines.lineCount(), lines.length());
        unacked.addLast(entry);
        unackedLines += entry.lines();
        unsent.addLast(entry);
        unsentLines += entry.lines();
        unsentBytes += entry.bytes();
        return unsentLines;
    }

    /** Returns the bytes of the lines not yet sent on the current connection. */
    public synchronized long unsentBytes() {
        return unsentBytes;
    }

    /**
     * Returns the blocks not yet sent on the current connection, up to {@code maxLines} lines and
     * {@code maxBytes} bytes (but at least one block if any waits), and marks them sent.
     */
    public synchronized List<LogChunk> nextBatch(int maxLines, int maxBytes) {
        List<LogChunk> batch = new ArrayList<>(Math.min(8, unsent.size()));
        long lines = 0;
        long bytes = 0;
        while (!unsent.isEmpty()) {
            Entry next = unsent.peekFirst();
            if (!batch.isEmpty() && (lines + next.lines() > maxLines || bytes + next.bytes() > maxBytes)) {
                break;
            }
            unsent.pollFirst();
            unsentLines -= next.lines();
            unsentBytes -= next.bytes();
            batch.add(next.chunk());
            lines += next.lines();
            bytes += next.bytes();
        }
        return batch;
    }

    /** Drops the blocks whose lines are all up to {@code sequence}, which the master has written. */
    public synchronized void ack(long sequence) {
        if (sequence <= ackedSequence) {
            return;
        }
        ackedSequence = Math.min(sequence, lastSequence);
        while (!unacked.isEmpty() && unacked.peekFirst().last() <= ackedSequence) {
            unackedLines -= unacked.removeFirst().lines();
        }
        // The master may acknowledge lines this connection has not sent (it had them from before
        // a reconnect): they need not be sent again.
        while (!unsent.isEmpty() && unsent.peekFirst().last() <= ackedSequence) {
            Entry sent = unsent.removeFirst();
            unsentLines -= sent.lines();
            unsentBytes -= sent.bytes();
        }
        notifyAll();
    }

    /** After a reconnect: everything unacknowledged is sent again. */
    public synchronized void resend() {
        unsent.clear();
        unsent.addAll(unacked);
        unsentLines = 0;
        unsentBytes = 0;
        for (Entry entry : unsent) {
            unsentLines += entry.lines();
            unsentBytes += entry.bytes();
        }
    }

    /** Returns the highest sequence number the master acknowledged (0 if none): the lines up to it are gone from here. */
    public synchronized long getAckedSequence() {
        return ackedSequence;
    }

    /** Returns the sequence number of the last line added (0 if none). */
    public synchronized long getLastSequence() {
        return lastSequence;
    }

    /** Returns whether every line added has been acknowledged. */
    public synchronized boolean isFullyAcked() {
        return ackedSequence >= lastSequence;
    }

    /** Returns the number of lines waiting for an acknowledgement (whole blocks: a partly acknowledged one counts whole). */
    public synchronized long pending() {
        return unackedLines;
    }

    /** Releases a reader blocked in {@link #add}; further lines are still accepted. */
    public synchronized void close() {
        closed = true;
        notifyAll();
    }

    /**
     * Ends the attempt's output: {@link #getLastSequence()} is final from here, lines added later
     * are dropped (counted in {@link #droppedAfterSeal()}), and a reader blocked in {@link #add}
     * returns at once, dropping its lines. Called when the attempt ends, before its last sequence
     * is taken for the end's record, so no line can follow the end it states, however
     * long a reader was blocked.
     */
    public synchronized void seal() {
        sealed = true;
        closed = true;
        notifyAll();
    }

    /**
     * The master cut the task's log at its size limit and keeps none of this attempt's lines any
     * more: every line waiting is dropped as if acknowledged, a reader blocked in {@link #add}
     * goes on, and lines added later are numbered and dropped at once (counted in
     * {@link #droppedAfterCut()}), so nothing more is sent.
     */
    public synchronized void cut() {
        cut = true;
        ackedSequence = lastSequence;
        unacked.clear();
        unsent.clear();
        unackedLines = 0;
        unsentLines = 0;
        unsentBytes = 0;
        notifyAll();
    }

    /** Returns whether {@link #cut()} was called. */
    public synchronized boolean isCut() {
        return cut;
    }

    /** Returns how many lines were added after {@link #cut()} and dropped. */
    public synchronized long droppedAfterCut() {
        return droppedAfterCut;
    }

    /** Returns whether {@link #seal()} was called. */
    public synchronized boolean isSealed() {
        return sealed;
    }

    /** Returns how many lines were added after {@link #seal()} and dropped. */
    public synchronized long droppedAfterSeal() {
        return droppedAfterSeal;
    }
}
