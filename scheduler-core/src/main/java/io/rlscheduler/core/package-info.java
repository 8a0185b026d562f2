/**
 * The lease and state core of rl-scheduler: tasks, their leases and fencing epochs, workers and
 * the event stream, kept in Redis and changed only by Lua scripts.
 *
 * <ul>
 *   <li>{@link io.rlscheduler.core.LeaseCore}: the gateway to one namespace in Redis; every
 *       ownership-dependent change is one script run, atomic and fenced by epoch.</li>
 *   <li>What goes in: {@link io.rlscheduler.core.CoreOptions} (immutable settings),
 *       {@link io.rlscheduler.core.TaskDefinition}, {@link io.rlscheduler.core.WorkerRegistration},
 *       ids checked by {@link io.rlscheduler.core.TaskIds}.</li>
 *   <li>What comes out: {@link io.rlscheduler.core.TaskRecord} with its
 *       {@link io.rlscheduler.core.TaskState} (one transition table, the same in Java and in the
 *       scripts) and history, {@link io.rlscheduler.core.WorkerInfo}, the results and statuses of
 *       each call, and {@link io.rlscheduler.core.TaskEvent}s through an
 *       {@link io.rlscheduler.core.EventSubscription}.</li>
 *   <li>Failures: {@link io.rlscheduler.core.SchedulerException}, unchecked, saying whether a
 *       retry may succeed, with the subclasses a caller acts on:
 *       {@link io.rlscheduler.core.IllegalTaskStateException},
 *       {@link io.rlscheduler.core.TaskNotFoundException},
 *       {@link io.rlscheduler.core.TaskIdConflictException} and
 *       {@link io.rlscheduler.core.SchedulerTimeoutException}.</li>
 * </ul>
 *
 * <p>Everything here is thread-safe or immutable; calls that reach Redis are asynchronous.
 */
package io.rlscheduler.core;
