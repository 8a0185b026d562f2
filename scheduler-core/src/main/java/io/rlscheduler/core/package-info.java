/**
 * The public API of the lease and state core of rl-scheduler: the values a master's and a worker's
 * public methods take and return. Tasks, their leases and fencing epochs, workers and the event
 * stream are kept in Redis and changed only by Lua scripts, through the internal gateway in
 * {@code io.rlscheduler.core.internal}.
 *
 * <ul>
 *   <li>Settings: {@link io.rlscheduler.core.CoreOptions} (immutable, built by a builder) and the
 *       task id rule {@link io.rlscheduler.core.TaskIds}.</li>
 *   <li>Tasks: {@link io.rlscheduler.core.TaskRecord} with its
 *       {@link io.rlscheduler.core.TaskState} (one transition table, the same in Java and in the
 *       scripts) and history of {@link io.rlscheduler.core.TaskTransition}s, pages of records
 *       ({@link io.rlscheduler.core.TaskPage}), and the {@link io.rlscheduler.core.TaskEvent}s of
 *       the event stream; the provenance of each attempt, the code it ran and where
 *       ({@link io.rlscheduler.core.AttemptProvenance}).</li>
 *   <li>Workers: {@link io.rlscheduler.core.WorkerInfo} with its
 *       {@link io.rlscheduler.core.WorkerState} and the {@link io.rlscheduler.core.TaskLease}s it
 *       holds, and the outcome of removing one ({@link io.rlscheduler.core.WorkerRemoval},
 *       {@link io.rlscheduler.core.WorkerRemovalStatus}).</li>
 *   <li>Run artifacts: what an attempt left in its run directory,
 *       {@link io.rlscheduler.core.AttemptOutputs}, with its
 *       {@link io.rlscheduler.core.OutputsState} (one table, the same in Java and in the script).</li>
 *   <li>Failures: {@link io.rlscheduler.core.SchedulerException}, unchecked, saying whether a
 *       retry may succeed, with the subclasses a caller acts on:
 *       {@link io.rlscheduler.core.IllegalTaskStateException},
 *       {@link io.rlscheduler.core.TaskNotFoundException},
 *       {@link io.rlscheduler.core.TaskIdConflictException},
 *       {@link io.rlscheduler.core.OwnerLimitExceededException} and
 *       {@link io.rlscheduler.core.SchedulerTimeoutException}.</li>
 *   <li>Owners: their limits and weight ({@link io.rlscheduler.core.OwnerLimits}, each limit an
 *       {@link io.rlscheduler.core.OwnerLimit}) and their share and usage
 *       ({@link io.rlscheduler.core.OwnerShare}).</li>
 * </ul>
 *
 * <p>Every type here is immutable or stateless, and so thread-safe.
 */
package io.rlscheduler.core;
