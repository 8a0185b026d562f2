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
 * {@link TaskOutput}: a block per read to a {@link BlockOutput}, else one call per line. {@link #done()} completes after the last line was passed on. Once
 * {@link #detach() detached}, lines are dropped: used when the attempt has been reported as ended
 * while something outside its process group still holds the pipe open.
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
    private final Object lock = new Object();
    /** Written without {@link #lock}: {@link #detach()} must not wait for a delivery in progress. */
    private volatile boolean detached;
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
     * Drops every line read from now on. Returns at once, without waiting for a delivery in
     * progress: one may be blocked for long in the output (a full log buffer while the master is
     * unreachable), and the caller is the shared supervision thread. Such a delivery still ends in
     * the output; the output decides what it takes after the attempt ended (the worker's log
     * buffer is sealed first, see {@code LogBuffer#seal}).
     */
    public void detach() {
        detached = true;
    }

    private void deliver(LineBlock lines) {
        synchronized (lock) {
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
        }
    }
}
