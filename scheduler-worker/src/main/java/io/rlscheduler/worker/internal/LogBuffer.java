package io.rlscheduler.worker.internal;

import io.rlscheduler.protocol.LogLine;
import io.rlscheduler.protocol.LogStream;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The output lines of one attempt that the master has not yet acknowledged. Lines get sequence
 * numbers 1, 2, 3, ... in the order they are added; they stay here until a {@code LogAck} covers
 * them, and after a reconnect everything unacknowledged is sent again (the master skips what it
 * already has). Bounded: when {@code capacity} lines wait unacknowledged, {@link #add} blocks the
 * reading thread, which in turn blocks the task's writes to its pipe: back-pressure instead of loss.
 * Thread-safe.
 */
public final class LogBuffer {

    private final String taskId;
    private final long epoch;
    private final int capacity;
    private final ArrayDeque<LogLine> unacked = new ArrayDeque<>();
    /**
     * The tail of {@link #unacked} not yet sent on the current connection, so a batch is taken
     * from its head instead of walking past every line sent but not yet acknowledged (up to the
     * capacity: a quadratic cost for a chatty task).
     */
    private final ArrayDeque<LogLine> unsent = new ArrayDeque<>();
    private long lastSequence;
    private long ackedSequence;
    private boolean closed;

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
     * Adds a line; blocks while the buffer is full (until acknowledged or closed).
     *
     * @return how many lines now wait to be sent on the current connection
     */
    public synchronized long add(LogStream stream, String text) throws InterruptedException {
        while (unacked.size() >= capacity && !closed) {
            wait(200);
        }
        lastSequence++;
        LogLine line = LogLine.newBuilder().setSequence(lastSequence).setStream(stream)
                .setTimestampUnixMs(System.currentTimeMillis()).setText(text).build();
        unacked.addLast(line);
        unsent.addLast(line);
        return unsent.size();
    }

    /** Returns up to {@code max} lines not yet sent on the current connection, and marks them sent. */
    public synchronized List<LogLine> nextBatch(int max, int maxBytes) {
        List<LogLine> batch = new ArrayList<>(Math.min(max, unsent.size()));
        int bytes = 0;
        while (!unsent.isEmpty() && batch.size() < max) {
            LogLine line = unsent.peekFirst();
            int size = line.getText().length() * 3 + 32;
            if (bytes > 0 && bytes + size > maxBytes) {
                break;
            }
            batch.add(unsent.pollFirst());
            bytes += size;
        }
        return batch;
    }

    /** Drops the lines up to {@code sequence}, which the master has written. */
    public synchronized void ack(long sequence) {
        if (sequence <= ackedSequence) {
            return;
        }
        ackedSequence = Math.min(sequence, lastSequence);
        while (!unacked.isEmpty() && unacked.peekFirst().getSequence() <= ackedSequence) {
            unacked.removeFirst();
        }
        // The master may acknowledge lines this connection has not sent (it had them from before
        // a reconnect): they need not be sent again.
        while (!unsent.isEmpty() && unsent.peekFirst().getSequence() <= ackedSequence) {
            unsent.removeFirst();
        }
        notifyAll();
    }

    /** After a reconnect: everything unacknowledged is sent again. */
    public synchronized void resend() {
        unsent.clear();
        unsent.addAll(unacked);
    }

    /** Returns the sequence number of the last line added (0 if none). */
    public synchronized long getLastSequence() {
        return lastSequence;
    }

    /** Returns whether every line added has been acknowledged. */
    public synchronized boolean isFullyAcked() {
        return ackedSequence >= lastSequence;
    }

    /** Returns the number of lines waiting for an acknowledgement. */
    public synchronized int pending() {
        return unacked.size();
    }

    /** Releases a reader blocked in {@link #add}; further lines are still accepted. */
    public synchronized void close() {
        closed = true;
        notifyAll();
    }
}
