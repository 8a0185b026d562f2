/**
 * The benchmarks of rl-scheduler, not part of the product; {@code scripts/bench.sh} runs them and
 * docs/benchmarks.md holds their figures.
 *
 * <ul>
 *   <li>{@link io.rlscheduler.bench.BenchMain}: runs the end-to-end benchmarks of
 *       {@link io.rlscheduler.bench.harness} by name, writes one JSON result per benchmark and
 *       prints a table of them; it also converts a JMH report into the same shape.</li>
 *   <li>JMH micro-benchmarks: {@link io.rlscheduler.bench.CodecBenchmark} (our frame codec
 *       against Netty's stock protobuf pipeline, over {@code CodecPipeline} and {@code Payloads})
 *       and {@link io.rlscheduler.bench.LeaseScriptBenchmark} (the lease core's Lua scripts
 *       against a plain {@code SET} round trip, over {@code LeaseFixture}).</li>
 * </ul>
 */
package io.rlscheduler.bench;
