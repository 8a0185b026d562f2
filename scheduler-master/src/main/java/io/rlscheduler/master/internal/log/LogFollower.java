package io.rlscheduler.master.internal.log;

import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.LogRecord;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One follower of a task log. It reads what was in the file when it subscribed at its consumer's
 * pace, and meanwhile queues the lines written after that point, which the task's I/O thread hands
 * it ({@link #offer}); the I/O thread fixes that point ({@link #attach}) in the same step in which it
 * starts handing it lines, so the switch from file to live has no gap and no duplicate.
 *
 * <p>The live queue is bounded. When it is full the follower is detached: the queue is dropped and,
 * once the follower has read the file up to where it had got, it asks the I/O thread to attach it
 * again at the file's current end ({@link LogStripe#reattach}), reading the lines it
 * missed from the file. A slow consumer thus never blocks a writer and never loses a line; it only
 * loses the stream (stdout/stderr) of lines it reads back from the file.
 *
 * <p>Delivery runs on the manager's delivery executor, one task at a time per follower
 * ({@code scheduled}); the fields marked "drain only" are touched by that task alone.
 */
final class LogFollower implements LogFollow {

    private static final Logger log = LoggerFactory.getLogger(LogFollower.class);
    private static final int LINES_PER_TURN = 256;

    private final String taskId;
    private final Path path;
    private final Consumer<LogRecord> consumer;
    private final int capacity;
    private final Executor delivery;
    private final LogStripe stripe;
    private final Consumer<LogFollower> onEnded;
    private final CompletableFuture<LogRecord> ended = new CompletableFuture<>();

    private final Object lock = new Object();
    // Guarded by lock.
    private final ArrayDeque<LiveBlock> live = new ArrayDeque<>();
    private long liveLines;
    private boolean attached;
    private boolean attachPending = true;
    private long replayTarget;
    private LogRecord end;
    private String urgentEndNote;
    /** What {@link #whenEnded()} fails with, or null to complete it with the end. */
    private Throwable failure;
    private boolean scheduled;
    private boolean finished;
    private volatile boolean stopping;

    // Drain only.
    private long position;
    /** The attempt, epoch and sequence number of the last line delivered. */
    private final LogCursor cursor = new LogCursor();
    private LogLineReader reader;
    private long consumerFailures;

    /**
     * @param stripe  the I/O thread of the task, which attaches and detaches the follower
     * @param onEnded told once the follower has delivered its END_OF_STREAM
     */
    LogFollower(String taskId, Path path, Consumer<LogRecord> consumer, int capacity, Executor delivery,
            LogStripe stripe, Consumer<LogFollower> onEnded) {
        this.taskId = taskId;
        this.path = path;
        this.consumer = consumer;
        this.capacity = capacity;
        this.delivery = delivery;
        this.stripe = stripe;
        this.onEnded = onEnded;
    }

    @Override
    public String getTaskId() {
        return taskId;
    }

    @Override
    public boolean isEnded() {
        return ended.isDone();
    }

    @Override
    public CompletableFuture<LogRecord> whenEnded() {
        return ended.copy(); // callers cannot complete ours
    }

    @Override
    public void close() {
        if (terminate("follow closed")) {
            stripe.detach(this);
        }
    }

    // ---- called by the task's I/O thread -------------------------------------------------------

    /**
     * Attaches the follower at byte offset {@code fileLength}: it reads the file up to there, then
     * the lines offered from now on, then {@code endRecord} if the attempt has already ended.
     *
     * @return whether the follower is now live (not ended, not stopping): add it to the task's followers
     */
    boolean attach(long fileLength, LogRecord endRecord) {
        boolean submit;
        boolean nowLive;
        synchronized (lock) {
            if (finished || urgentEndNote != null) {
                return false;
            }
            attachPending = false;
            replayTarget = fileLength;
            if (endRecord != null && end == null) {
                end = endRecord;
            }
            attached = end == null;
            nowLive = attached;
            submit = markScheduled();
        }
        if (submit) {
            schedule();
        }
        return nowLive;
    }

    /**
     * Offers lines just written. The queue holds up to the capacity in lines, and always one
     * block, however many lines it has.
     *
     * @return false if the follower no longer takes live lines (ended, closed, or its queue was
     *         full): remove it from the task's followers
     */
    boolean offer(LiveBlock block) {
        boolean submit;
        boolean accepted;
        synchronized (lock) {
            if (!attached) {
                return false;
            }
            if (liveLines > 0 && liveLines + block.lines() > capacity) {
                // Detach rather than block the writer; the drain reads the lines from the file.
                clearLive();
                attached = false;
                accepted = false;
            } else {
                live.add(block);
                liveLines += block.lines();
                accepted = true;
            }
            submit = markScheduled();
        }
        if (submit) {
            schedule();
        }
        return accepted;
    }

    // Guarded by lock.
    private void clearLive() {
        live.clear();
        liveLines = 0;
    }

    /**
     * Stops handing the follower live lines without ending it: it delivers what it has queued, then
     * asks to be attached again and reads from the file what it missed. Used when the task's state
     * is re-read from its file.
     */
    void detach() {
        boolean submit;
        synchronized (lock) {
            if (!attached) {
                return;
            }
            attached = false;
            submit = markScheduled();
        }
        if (submit) {
            schedule();
        }
    }

    /** Ends the follower after the lines already queued and any left to read from the file. */
    void end(LogRecord endRecord) {
        boolean submit;
        synchronized (lock) {
            if (finished || end != null) {
                return;
            }
            end = endRecord;
            attached = false;
            submit = markScheduled();
        }
        if (submit) {
            schedule();
        }
    }

    /**
     * Ends the follower as soon as the record being delivered returns: nothing else queued is
     * delivered, then END_OF_STREAM marked incomplete with {@code note}.
     *
     * @return whether this call ended it (false if it was already ending)
     */
    boolean terminate(String note) {
        return fail(note, null);
    }

    /**
     * As {@link #terminate}, and {@link #whenEnded()} then fails with {@code cause} (after the
     * consumer got the END_OF_STREAM): the follow could not be served.
     *
     * @param cause what the follow's future fails with; null to complete it with the end
     * @return whether this call ended it (false if it was already ending)
     */
    boolean fail(String note, Throwable cause) {
        boolean submit;
        synchronized (lock) {
            if (finished || urgentEndNote != null) {
                return false;
            }
            urgentEndNote = note;
            failure = cause;
            stopping = true;
            clearLive();
            attached = false;
            submit = markScheduled();
        }
        if (submit) {
            schedule();
        }
        return true;
    }

    /**
     * As {@link #terminate}, unless the follower's END_OF_STREAM is already queued (its attempt
     * ended and the file was forced): then that end goes out, complete, after the lines before it.
     * For the manager's close, once no writer or sync thread is left to queue an end.
     *
     * @return whether this call ended it
     */
    boolean terminateUnlessEnding(String note) {
        synchronized (lock) {
            if (end != null) {
                return false;
            }
        }
        return terminate(note);
    }

    // ---- delivery ------------------------------------------------------------------------------

    private boolean markScheduled() {
        if (scheduled || finished) {
            return false;
        }
        scheduled = true;
        return true;
    }

    private void schedule() {
        try {
            delivery.execute(this::drain);
        } catch (RejectedExecutionException shutDown) {
            // Only while the manager closes, after it terminated every follower: deliver the
            // END_OF_STREAM here rather than never.
            drain();
        }
    }

    private enum Step { REPLAY, LIVE, END, ATTACH, IDLE }

    private void drain() {
        try {
            while (true) {
                Step step;
                LiveBlock next = null;
                LogRecord endRecord = null;
                long target = 0;
                synchronized (lock) {
                    if (urgentEndNote != null) {
                        step = Step.END;
                        endRecord = LogRecord.endOfStream(taskId, cursor.attempt(), cursor.epoch(), null, false,
                                urgentEndNote);
                    } else if (position < replayTarget) {
                        step = Step.REPLAY;
                        target = replayTarget;
                    } else if ((next = live.poll()) != null) {
                        liveLines -= next.lines();
                        step = Step.LIVE;
                    } else if (end != null) {
                        step = Step.END;
                        endRecord = end;
                    } else if (!attached && !attachPending) {
                        step = Step.ATTACH;
                        attachPending = true;
                        scheduled = false;
                    } else {
                        step = Step.IDLE;
                        scheduled = false;
                    }
                    if (step == Step.END) {
                        finished = true;
                        scheduled = false;
                        clearLive();
                    }
                }
                switch (step) {
                    case REPLAY -> replay(target);
                    case LIVE -> deliverLive(next);
                    case END -> {
                        finish(endRecord);
                        return;
                    }
                    case ATTACH -> {
                        // Caught up with the file after falling behind: ask to be attached again.
                        stripe.reattach(this);
                        return;
                    }
                    case IDLE -> {
                        return;
                    }
                    default -> throw new AssertionError(step);
                }
            }
        } catch (RuntimeException | Error bug) {
            log.error("task {}: log follower failed; ending it", taskId, bug);
            synchronized (lock) {
                scheduled = false;
            }
            terminate("log follower failed: " + bug);
        }
    }

    /** Delivers the file's lines from {@link #position} up to {@code target}, a turn at a time. */
    private void replay(long target) {
        try {
            if (reader == null) {
                reader = LogLineReader.open(path, position);
            }
            for (int i = 0; i < LINES_PER_TURN && position < target && !stopping; i++) {
                long start = position;
                String line = reader.next(target);
                if (line == null) {
                    throw new IOException("the file ends before byte " + target);
                }
                position = reader.consumed();
                replayLine(LogFileFormat.parse(line, start == 0));
            }
            if (position >= target) {
                closeReader();
            }
        } catch (IOException e) {
            log.warn("task {}: cannot read log file {}: {}", taskId, path, e.toString());
            closeReader();
            terminate("cannot read the log file: " + e);
        }
    }

    /** Delivers a block's lines, one record each, stopping early if the follow is ended meanwhile. */
    private void deliverLive(LiveBlock block) {
        cursor.moveTo(block.attempt(), block.epoch(), cursor.sequence());
        byte[] bytes = block.bytes();
        int start = 0;
        for (int i = 0; i < block.lines() && !stopping; i++) {
            int end = start;
            while (bytes[end] != '\n') {
                end++;
            }
            String text = LogFileFormat.parse(new String(bytes, start, end - start, StandardCharsets.UTF_8), false).text();
            start = end + 1;
            position = block.fileStart() + start;
            cursor.moveTo(block.attempt(), block.epoch(), block.firstSequence() + i);
            deliver(LogRecord.line(taskId, block.attempt(), block.epoch(), cursor.sequence(), block.stream(), text));
        }
    }

    /**
     * Delivers a file line if it is task output. End markers are not: the END_OF_STREAM comes
     * from the manager's state, after everything else.
     */
    private void replayLine(LogFileFormat.Line line) {
        if (cursor.advance(line)) {
            deliver(LogRecord.line(taskId, cursor.attempt(), cursor.epoch(), cursor.sequence(),
                    LogRecord.Stream.UNKNOWN, line.text()));
        }
    }

    private void deliver(LogRecord record) {
        try {
            consumer.accept(record);
        } catch (VirtualMachineError fatal) {
            throw fatal;
        } catch (Throwable failure) {
            // A consumer's failure is its own: the follow goes on, and no other follower or writer notices.
            consumerFailures++;
            if (consumerFailures == 1) {
                log.warn("task {}: log consumer threw on {}; delivery goes on", taskId, record, failure);
            } else {
                log.debug("task {}: log consumer threw again ({} times): {}", taskId, consumerFailures,
                        failure.toString());
            }
        }
    }

    private void finish(LogRecord endRecord) {
        closeReader();
        deliver(endRecord);
        onEnded.accept(this);
        Throwable cause;
        synchronized (lock) {
            cause = failure;
        }
        if (cause == null) {
            ended.complete(endRecord);
        } else {
            ended.completeExceptionally(cause);
        }
    }

    private void closeReader() {
        if (reader != null) {
            try {
                reader.close();
            } catch (IOException e) {
                log.debug("task {}: closing log reader: {}", taskId, e.toString());
            }
            reader = null;
        }
    }

    @Override
    public String toString() {
        return "LogFollower[" + taskId + "]";
    }
}
