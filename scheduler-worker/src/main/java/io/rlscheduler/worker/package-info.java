/**
 * The worker: {@link io.rlscheduler.worker.SchedulerWorker}, one per machine, built from an
 * immutable {@link io.rlscheduler.worker.WorkerOptions}, runs the attempts a master assigns it,
 * each through a {@link io.rlscheduler.worker.TaskExecutor} (by default
 * {@link io.rlscheduler.worker.PythonTaskExecutor}: a supervised python3 process group) in the
 * directories {@link io.rlscheduler.worker.RunDirectories} lays out. An executor gets a
 * {@link io.rlscheduler.worker.TaskContext}, starts a {@link io.rlscheduler.worker.TaskExecution}
 * (or throws {@link io.rlscheduler.worker.TaskLaunchException}), streams output to a
 * {@link io.rlscheduler.worker.TaskOutput}, and ends with an
 * {@link io.rlscheduler.worker.ExecutionResult}, which says whether and why the worker stopped it
 * ({@link io.rlscheduler.worker.StopReason}).
 *
 * <p>This package is the worker's public API; its mechanisms live in
 * {@code io.rlscheduler.worker.internal}.
 */
package io.rlscheduler.worker;
