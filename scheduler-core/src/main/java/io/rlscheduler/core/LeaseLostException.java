package io.rlscheduler.core;

/**
 * A write made for an attempt that no longer holds its task: the task's current epoch is another
 * (the lease lapsed and the task was re-queued or taken by another attempt), or another session of
 * the worker holds it. Nothing was changed, and the attempt must stop: whatever it writes from now
 * on is refused the same way. Not retryable.
 */
public final class LeaseLostException extends SchedulerException {

    private static final long serialVersionUID = 1L;

    private final String taskId;
    private final long epoch;
    private final long currentEpoch;

    /**
     * @param taskId       the task
     * @param epoch        the epoch the write was made for
     * @param currentEpoch the task's current epoch (0 when the task is not known)
     * @param what         what was refused, as "checkpoint e12-3 of task t-1"
     */
    public LeaseLostException(String taskId, long epoch, long currentEpoch, String what) {
        super(what + " refused: epoch " + epoch + " no longer holds the task (current epoch " + currentEpoch + ")",
                false, null);
        this.taskId = taskId;
        this.epoch = epoch;
        this.currentEpoch = currentEpoch;
    }

    /** Returns the task id. */
    public String getTaskId() { return taskId; }
    /** Returns the epoch the refused write was made for. */
    public long getEpoch() { return epoch; }
    /** Returns the task's current epoch, 0 when the task is not known. */
    public long getCurrentEpoch() { return currentEpoch; }
}
