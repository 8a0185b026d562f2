package io.rlscheduler.bench.harness;

import java.util.List;
import java.util.Optional;

/** The registry of end-to-end benchmarks, in the order they run when none is named. */
public final class Benchmarks {

    /** Every end-to-end benchmark. Add a new one here. */
    public static final List<EndToEndBenchmark> ALL = List.of(
            new DispatchThroughput(),
            new DispatchLatency(),
            new LogStream(),
            new Failover(),
            new Heartbeats(),
            new CheckpointThroughput(CheckpointThroughput.Kind.DIRECTORY),
            new CheckpointThroughput(CheckpointThroughput.Kind.S3),
            new Resume(),
            new FairShare(),
            new HttpBench());

    private Benchmarks() {
    }

    /** Returns the benchmark of that name. */
    public static Optional<EndToEndBenchmark> byName(String name) {
        return ALL.stream().filter(b -> b.name().equals(name)).findFirst();
    }
}
