/**
 * The end-to-end benchmarks and what they are measured with; not part of the product.
 *
 * <ul>
 *   <li>The benchmarks, one class each, listed in {@link io.rlscheduler.bench.harness.Benchmarks}:
 *       {@link io.rlscheduler.bench.harness.DispatchThroughput},
 *       {@link io.rlscheduler.bench.harness.DispatchLatency},
 *       {@link io.rlscheduler.bench.harness.LogStream},
 *       {@link io.rlscheduler.bench.harness.Failover},
 *       {@link io.rlscheduler.bench.harness.Heartbeats},
 *       {@link io.rlscheduler.bench.harness.CheckpointThroughput} (two: one per store) and
 *       {@link io.rlscheduler.bench.harness.Resume}, each an
 *       {@link io.rlscheduler.bench.harness.EndToEndBenchmark} with its
 *       {@link io.rlscheduler.bench.harness.BenchParams}, giving a
 *       {@link io.rlscheduler.bench.harness.BenchResult} ({@link io.rlscheduler.bench.harness.JmhReport}
 *       turns a JMH report into the same shape).</li>
 *   <li>The clusters they run on: {@link io.rlscheduler.bench.harness.LocalCluster} (Redis, a
 *       master and in-process workers in this JVM), a master or a worker in a JVM of its own
 *       ({@code MasterProcess}, {@link io.rlscheduler.bench.harness.MasterProcessMain},
 *       {@link io.rlscheduler.bench.harness.BenchWorkerMain}), {@code FailoverCluster} (a master and
 *       two worker JVMs to kill), {@code SimulatedWorkers} (thousands of workers as the master sees
 *       them), and {@link io.rlscheduler.bench.harness.NoopExecutor} (attempts that do nothing).</li>
 *   <li>The artifact benchmarks' parts: {@code CheckpointFiles} (the checkpoint they move),
 *       {@code CommitPath} (the worker's commit path over a claimed task), {@code InJvmS3} (s3proxy
 *       in this JVM), and the baselines {@code TransferManagerUploads} and {@code Shell}
 *       ({@code cp -r}, {@code sync}).</li>
 *   <li>What they measure with: {@code Completions}, {@code SampleRecorder} and
 *       {@link io.rlscheduler.bench.harness.Stats} (counts, durations, percentiles);
 *       {@code CpuUsage}, {@code JvmThreads}, {@code ProcStat} and
 *       {@link io.rlscheduler.bench.harness.RedisStats} (where the CPU time goes); {@code Jit}
 *       (when a warm-up is done) and {@code Machine} (what the figures were measured on).</li>
 * </ul>
 */
package io.rlscheduler.bench.harness;
