package io.rlscheduler.worker.internal;

import io.rlscheduler.protocol.LogStream;
import io.rlscheduler.worker.TaskOutput;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.util.concurrent.CompletableFuture;

/**
 * Reads one of a process's output streams on its own thread and passes its lines to a
 * {@link TaskOutput}: a block per read to a {@link BlockOutput}, else one call per line.
 * {@link #done()} completes after the last line was passed on. Once {@link #detach() detached},
 * lines are dropped: used when the process group has ended while something outside it still
 * holds the pipe open.
 */
public final class OutputPump implements Runnable {

    private static final Logger LOG = LoggerFactory.getLogger(OutputPump.class);
    /** Bytes asked for per read: a whole pipe buffer (64 KiB on Linux), so a chatty task's lines come in few blocks. */
    private static final int READ_BYTES = 64 * 1024;

    private final InputStream in;
    private final LogStream stream;
    private final TaskOutput output;
    private final String taskName;
    private final LineSplitter splitter;
    private final BlockOutput blocks;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    /** Set by {@link #detach()}; read by the pump thread before and after each delivery. */
    private volatile boolean detached;
    /** True while the pump thread is in the output (set before {@link #detached} is read). */
    private volatile boolean delivering;
    /** Completed once detached and no delivery is in progress: no line reaches the output after it. */
    private final CompletableFuture<Void> detachedQuiet = new CompletableFuture<>();
    // Touched only by the pump thread.
    private long dropped;
    private boolean outputFailed;

    /**
     * Creates a pump; {@link #run()} it on a thread of its own.
     *
     * @param in       the stream, read until its end
     * @param stream   which stream it is
     * @param output   receives the lines
     * @param taskName names the attempt in log messages
     */
    public OutputPump(InputStream in, LogStream stream, TaskOutput output, String taskName) {
        this.in = in;
        this.stream = stream;
        this.output = output;
        this.taskName = taskName;
        this.splitter = new LineSplitter(LineSplitter.DEFAULT_MAX_LINE_BYTES, this::deliver);
        this.blocks = output instanceof BlockOutput block ? block : null;
    }

    /** Returns a future completed after the stream ended and its last line was passed on. */
    public CompletableFuture<Void> done() {
        return done;
    }

    @Override
    public void run() {
        byte[] buffer = new byte[READ_BYTES];
        try {
            int n;
            while ((n = in.read(buffer)) != -1) {
                splitter.feed(buffer, 0, n);
            }
        } catch (IOException e) {
            LOG.debug("{}: {} closed: {}", taskName, stream, e.toString());
        } catch (RuntimeException | Error e) {
            LOG.error("{}: reading {} failed", taskName, stream, e);
        } finally {
            try {
                splitter.finish();
            } finally {
                try {
                    in.close();
                } catch (IOException ignored) {
                    // nothing left to release
                }
                done.complete(null);
            }
        }
    }

    /**
     * Drops every line read from now on, without waiting: the caller is the shared supervision
     * thread. A delivery in progress is not cut short: it may be blocked for long in the output
     * (a full log buffer while the master is unreachable) and its lines were written by the task
     * before it ended. The future completes when no delivery is in progress any more, after which
     * no line reaches the output: at once, or when that delivery returns.
     *
     * @return completes once nothing more reaches the output
     */
    public CompletableFuture<Void> detach() {
        detached = true;
        // A delivery that set `delivering` after this read sees `detached` and drops its lines; one
        // that cleared it before this read completes the future itself (see deliver).
        if (!delivering) {
            detachedQuiet.complete(null);
        }
        return detachedQuiet;
    }

    private void deliver(LineBlock lines) {
        delivering = true;
        try {
            if (detached) {
                if (dropped == 0) {
                    LOG.warn("{}: {} still open after the attempt was reported ended; dropping its lines",
                            taskName, stream);
                }
                dropped += lines.lineCount();
                return;
            }
            try {
                if (blocks != null) {
                    blocks.lines(stream, lines);
                } else {
                    for (int i = 0; i < lines.lineCount(); i++) {
                        output.line(stream, lines.text(i));
                    }
                }
            } catch (RuntimeException e) {
                // Keep draining: a process whose pipe fills up blocks forever.
                if (!outputFailed) {
                    outputFailed = true;
                    LOG.warn("{}: the TaskOutput threw on a {} line; lines are still read", taskName, stream, e);
                }
            }
        } finally {
            delivering = false;
            if (detached) {
                detachedQuiet.complete(null);
            }
        }
    }
}
