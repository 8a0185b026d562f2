package io.rlscheduler.worker;

/**
 * Runs one attempt of a task. The worker prepares everything that does not depend on how the task
 * runs (run and checkpoint directories, the parameter file, the timeout, cancellation, lease
 * fencing, log sequencing and delivery) and hands the executor a {@link TaskContext}; the
 * executor starts the work and streams its output lines to a {@link TaskOutput}.
 *
 * <p>The default is {@link PythonTaskExecutor}, which runs the task's script as a supervised
 * python3 process group. Implementations must be thread-safe: the worker may start several tasks
 * at once.
 */
public interface TaskExecutor {

    /**
     * Starts an attempt. Returns quickly; the work goes on in the background.
     *
     * @param context what to run and with which resources
     * @param output  receives the attempt's output lines, from any thread, in order per stream
     * @return the running attempt
     * @throws TaskLaunchException if the attempt cannot be started (bad script path, spawn failure)
     */
    TaskExecution start(TaskContext context, TaskOutput output) throws TaskLaunchException;

    /**
     * Returns whether the attempts of this executor use their run directory, checkpoint directory
     * and parameter file. When true (the default, and what {@link PythonTaskExecutor} needs) the
     * worker creates them before {@link #start}; an in-JVM executor that uses none of them returns
     * false, and the worker only computes their paths (reported, never created), sparing each
     * attempt three directory creations and a file write.
     */
    default boolean usesRunDirectories() {
        return true;
    }
}
