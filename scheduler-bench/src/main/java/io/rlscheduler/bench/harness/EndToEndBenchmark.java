package io.rlscheduler.bench.harness;

import java.util.List;

/**
 * One end-to-end benchmark that {@link io.rlscheduler.bench.BenchMain} runs by name. To add one,
 * implement this interface in one class and list an instance in {@link Benchmarks#ALL}.
 *
 * <p>A run starts what it needs (usually a {@link LocalCluster}), warms up, measures, checks that
 * the work it measured was done correctly (throwing if not), stops everything it started and
 * returns its figure together with a baseline measured in the same run.
 */
public interface EndToEndBenchmark {

    /** Returns the name, as given on the command line and used for {@code bench-results/<name>.json}. */
    String name();

    /** Returns one line saying what is measured. */
    String description();

    /** Returns the parameters it accepts, with their defaults. */
    List<Param> parameters();

    /**
     * Runs the benchmark once.
     *
     * @param params its parameters (defaults filled in)
     * @return the figure, its baseline and the parameters and extra figures worth recording
     * @throws Exception if it cannot run, or the work it measured was not done correctly
     */
    BenchResult run(BenchParams params) throws Exception;

    /** A parameter: name, default value and a description. */
    record Param(String name, String defaultValue, String description) {
    }
}
