/**
 * The chaos run, a fault-injection harness and not part of the product: {@link io.rlscheduler.chaos.ChaosRun}
 * starts Redis, two masters and three workers as separate processes, runs real training on them
 * while it kills, freezes and restarts them, and checks that every task succeeded exactly once.
 *
 * <ul>
 *   <li>Options and verdict: {@link io.rlscheduler.chaos.ChaosOptions},
 *       {@link io.rlscheduler.chaos.ChaosReport}.</li>
 *   <li>The run: {@code ChaosDriver} (the phases), {@code ChaosCluster} and {@code ClusterProcess}
 *       (the processes), {@code Workload} and {@code TaskSubmitter} (the tasks),
 *       {@code FaultPlan} and {@code FaultInjector} (the faults), {@code RunLog} and
 *       {@code Workdir} (what it prints and keeps).</li>
 *   <li>The checks: {@code ChaosChecks} (the verdict per task) on {@code Evidence}: the task
 *       records, {@code TaskLogFile} (the master's log files) and {@code AttemptMarks} (what each
 *       attempt marked).</li>
 * </ul>
 */
package io.rlscheduler.chaos;
