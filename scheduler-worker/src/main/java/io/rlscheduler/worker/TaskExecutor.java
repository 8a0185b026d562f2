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
}
