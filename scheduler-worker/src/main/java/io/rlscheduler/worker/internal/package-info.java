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
 *       {@link io.rlscheduler.worker.internal.Attempt} is one.
 *       {@link io.rlscheduler.worker.internal.MetricsCollector} keeps the metrics it prints.</li>
 *   <li>Logs: {@link io.rlscheduler.worker.internal.LogBuffer} keeps an attempt's lines until
 *       acknowledged, as {@link io.rlscheduler.worker.internal.LineBlock}s taken in through a
 *       {@link io.rlscheduler.worker.internal.BlockOutput};
 *       {@link io.rlscheduler.worker.internal.LogShipper} sends them.</li>
 *   <li>Leases: {@link io.rlscheduler.worker.internal.LeaseKeeper} renews them, fences the
 *       attempts it cannot renew and sends the wire heartbeat.</li>
 *   <li>The master: {@link io.rlscheduler.worker.internal.MasterLink} is the connection,
 *       proving the worker's {@link io.rlscheduler.worker.internal.HelloCredential} (its own key,
 *       or the shared secret) in the hello;
 *       {@link io.rlscheduler.worker.internal.MessageRouter} hands its messages on. What the
 *       mechanisms of a started worker share is a
 *       {@link io.rlscheduler.worker.internal.WorkerRuntime}.</li>
 *   <li>Processes, for {@link io.rlscheduler.worker.PythonTaskExecutor}:
 *       {@link io.rlscheduler.worker.internal.ProcessExecution} is one attempt under the launcher
 *       ({@link io.rlscheduler.worker.internal.LauncherFile},
 *       {@link io.rlscheduler.worker.internal.LauncherCommand}), supervised on the shared
 *       {@link io.rlscheduler.worker.internal.Supervisor} thread;
 *       {@link io.rlscheduler.worker.internal.OutputPump} and
 *       {@link io.rlscheduler.worker.internal.LineSplitter} read its output into lines;
 *       {@link io.rlscheduler.worker.internal.ProcessGroups} and
 *       {@link io.rlscheduler.worker.internal.LeftoverGroups} find and kill process groups through
 *       {@code /proc}, those a crashed worker left included;
 *       {@link io.rlscheduler.worker.internal.ScriptPaths} keeps scripts inside the script roots;
 *       {@link io.rlscheduler.worker.internal.TaskEnvironment} and
 *       {@link io.rlscheduler.worker.internal.TaskParameters} make the environment and the
 *       arguments.</li>
 *   <li>The machine: {@link io.rlscheduler.worker.internal.ResourceProbe} reads its resources
 *       (processors, memory, GPUs through nvidia-smi).</li>
 *   <li>Provenance: {@code io.rlscheduler.worker.internal.provenance} records the code each
 *       attempt runs and where (script hash, git, interpreter, hostname, GPU UUIDs).</li>
 * </ul>
 */
package io.rlscheduler.worker.internal;
