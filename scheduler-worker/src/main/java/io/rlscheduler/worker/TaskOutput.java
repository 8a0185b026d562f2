package io.rlscheduler.worker;

import java.util.concurrent.CompletableFuture;
import io.rlscheduler.protocol.LogStream;

/** Receives an attempt's output, one line at a time. Implementations must be thread-safe. */
@FunctionalInterface
public interface TaskOutput {

    /**
     * Called for each complete line the attempt wrote, without its line terminator. Lines of one
     * stream arrive in the order written; the two streams may interleave.
     *
     * @param stream stdout or stderr
     * @param text   the line
     */
    void line(LogStream stream, String text);

    /**
     * Marks a checkpoint complete, as a script's {@code RLS_CHECKPOINT} line does: the entry
     * {@code path} of the attempt's checkpoint directory ("" for all of it) is committed to the
     * artifact store in the background, and becomes the task's latest checkpoint once all of it
     * is stored. For executors running in the worker's JVM; returns at once.
     *
     * @param path an entry of the checkpoint directory (relative, no {@code ..}), or "" for all of it
     * @return completes with the committed checkpoint's id; fails with a
     *         {@link io.rlscheduler.core.LeaseLostException} when the attempt no longer holds its
     *         task (nothing of the checkpoint is visible then), and with another
     *         {@link io.rlscheduler.core.SchedulerException} when it could not be taken, was
     *         replaced by a newer one before it was sent, or the worker has no artifact store
     */
    default CompletableFuture<String> checkpoint(String path) {
        return CompletableFuture.failedFuture(new UnsupportedOperationException("this output commits no checkpoints"));
    }
}
