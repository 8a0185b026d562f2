/**
 * The master's public API: submit training tasks, follow their logs, read their results and the
 * cluster's health.
 *
 * <ul>
 *   <li>The master: {@link io.rlscheduler.master.SchedulerMaster}, built from an immutable
 *       {@link io.rlscheduler.master.MasterOptions} (with its Redis connection and secret).</li>
 *   <li>Tasks: {@link io.rlscheduler.master.TaskSpec} (what to run, validated as it is built),
 *       {@link io.rlscheduler.master.TaskHandle} (a submitted task: its state, result, cancel and
 *       log), {@link io.rlscheduler.master.TaskResult} (how it ended) and
 *       {@link io.rlscheduler.master.PendingReason} (why it still waits in the queue).</li>
 *   <li>Logs and metrics: {@link io.rlscheduler.master.LogFollow} (a running follow of a task's
 *       log) delivering {@link io.rlscheduler.master.LogRecord}s,
 *       {@link io.rlscheduler.master.MetricPoint} (one {@code RLS_METRIC} line),
 *       {@link io.rlscheduler.master.LogFiles} (reading a log file as the master does) and
 *       {@link io.rlscheduler.master.RunComparison} (runs side by side, parameters and final
 *       metrics).</li>
 *   <li>Worker keys: {@link io.rlscheduler.master.WorkerKeys} (issue, rotate, revoke one
 *       credential per worker machine) listing {@link io.rlscheduler.master.WorkerKeyInfo}s.</li>
 *   <li>Sharing the GPUs between owners: {@link io.rlscheduler.master.Sharing} (each owner's
 *       limits and weight, the lab's defaults, the half-life of usage, and every owner's share).</li>
 *   <li>Health: {@link io.rlscheduler.master.HealthSnapshot} (workers, queue, dispatcher, event
 *       stream and log figures at one moment) with a
 *       {@link io.rlscheduler.master.WorkerUsage} per connected worker (its machine's load,
 *       memory and GPUs).</li>
 * </ul>
 *
 * <p>Task records, states and core options come from {@code io.rlscheduler.core}. The master's
 * mechanisms live in {@link io.rlscheduler.master.internal} and
 * {@link io.rlscheduler.master.internal.log}, which are not API.
 */
package io.rlscheduler.master;
