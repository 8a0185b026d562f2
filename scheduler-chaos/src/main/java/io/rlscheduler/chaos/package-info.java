/**
 * The chaos run, a fault-injection harness and not part of the product: {@link io.rlscheduler.chaos.ChaosRun}
 * starts Redis, two masters and three workers as separate processes (each worker its own run
 * root, all one artifact store), runs real training on them while it kills, freezes and restarts
 * them, and checks that every task succeeded exactly once and every resume started from the
 * right checkpoint.
 *
 * <ul>
 *   <li>Options and verdict: {@link io.rlscheduler.chaos.ChaosOptions},
 *       {@link io.rlscheduler.chaos.ChaosReport}.</li>
 *   <li>The run: {@code ChaosDriver} (the phases), {@code ChaosCluster} and {@code ClusterProcess}
 *       (the processes), {@code Workload} and {@code TaskSubmitter} (the tasks),
 *       {@code FaultPlan} and {@code FaultInjector} (the faults), {@code RunLog} and
 *       {@code Workdir} (what it prints and keeps).</li>
 *   <li>The checkpoints: {@code CheckpointWatch} (reads each task's committed checkpoints while
 *       the run goes on) into {@code CheckpointLedger} (every one seen, with its episode).</li>
 *   <li>The checks: {@code ChaosChecks} (the verdict per task) and {@code ResumeChecks} (fenced
 *       commits, each resume from the newest checkpoint before the failure) on {@code Evidence}:
 *       the task records and resume notes, {@code TaskLogFile} (the master's log files),
 *       {@code AttemptMarks} (what each attempt marked, from each worker's run root) and the
 *       ledger.</li>
 * </ul>
 */
package io.rlscheduler.chaos;
