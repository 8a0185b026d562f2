/**
 * The worker's mechanisms, wired together by {@link io.rlscheduler.worker.SchedulerWorker}. Not
 * public API: anything here may change without notice; use the types in
 * {@code io.rlscheduler.worker}.
 *
 * <ul>
 *   <li>Attempts: {@link io.rlscheduler.worker.internal.AttemptRunner} takes a task in, launches
 *       it, takes its output and stops it; {@link io.rlscheduler.worker.internal.AttemptOutcome}
 *       classifies its end; {@link io.rlscheduler.worker.internal.EndRecorder} records the end in
 *       Redis, whose event tells the masters;
 *       {@link io.rlscheduler.worker.internal.Attempts} holds them and
 *       {@link io.rlscheduler.worker.internal.Attempt} is one.</li>
 *   <li>Logs: {@link io.rlscheduler.worker.internal.LogBuffer} keeps an attempt's lines until
 *       acknowledged, {@link io.rlscheduler.worker.internal.LogShipper} sends them.</li>
 *   <li>Leases: {@link io.rlscheduler.worker.internal.LeaseKeeper} renews them, fences the
 *       attempts it cannot renew and sends the wire heartbeat.</li>
 *   <li>The master: {@link io.rlscheduler.worker.internal.MasterLink} is the connection,
 *       {@link io.rlscheduler.worker.internal.MessageRouter} hands its messages on.</li>
 *   <li>Processes, for {@link io.rlscheduler.worker.PythonTaskExecutor}: the launcher and its
 *       command line, script path checks, output line splitting, process groups read from
 *       {@code /proc}, environment and parameters; {@link io.rlscheduler.worker.internal.ResourceProbe}
 *       reads the machine's resources.</li>
 * </ul>
 */
package io.rlscheduler.worker.internal;
