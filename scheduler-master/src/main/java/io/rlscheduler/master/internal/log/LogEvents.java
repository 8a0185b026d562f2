package io.rlscheduler.master.internal.log;

/**
 * What a {@link TaskLogManager} tells its owner as it happens. Called on the task's log I/O
 * thread: an implementation must return at once, without blocking (hand slow work, such as a
 * Redis write, to an asynchronous call). Exceptions it throws are logged and otherwise ignored.
 */
public interface LogEvents {

    /** Tells nothing. */
    LogEvents NONE = new LogEvents() {
    };

    /**
     * An attempt's log ended: its end was written (complete or not), or the attempt is known to
     * have ended with nothing to write. No line of it is awaited any more.
     *
     * @param taskId   the task
     * @param epoch    the attempt's lease epoch
     * @param complete whether the log holds every line the attempt's end names; an incomplete one
     *                 (its lines waited for in vain, or the attempt taken back) still appends lines
     *                 that come after it
     */
    default void attemptEnded(String taskId, long epoch, boolean complete) {
    }

    /**
     * The task's log reached its size limit ({@link TaskLogManager.Limits#maxLogBytes()}) and was
     * cut: its file holds {@code bytes} bytes before the cut marker, and no later output line of
     * the task is kept. Told once per cut this manager writes.
     *
     * @param taskId the task
     * @param epoch  the epoch of the attempt whose line met the limit
     * @param bytes  the bytes the file holds before its cut marker
     */
    default void logCut(String taskId, long epoch, long bytes) {
    }
}
