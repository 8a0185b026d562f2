package io.rlscheduler.chaos;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The chaos run ({@code scripts/chaos.sh}, {@link ChaosRun}) in short: 12 tasks and 30 s of
 * faults (workers killed and frozen, the leader master killed, Redis killed and restarted) on a
 * fixed seed, about a minute in all, with every worker on its own run root and one directory
 * store. Its workdir (logs, each worker's run root, the store, every process's output) stays in
 * {@code target/chaos-it/} for a failure to be read. The seed's plan freezes a worker for longer
 * than the task lease while it trains, so some run resumes on another worker from the store.
 */
class ChaosIT {

    static final long SEED = 20240601;
    static final Path REPO_SCRIPTS = Path.of(System.getProperty("user.dir")).getParent().resolve("scripts");

    @Test
    void shortChaosRunLosesNothingDuplicatesNothingNeverRunsATaskTwiceAtOnceAndResumesFromTheNewestCheckpoint()
            throws Exception {
        Path work = Path.of("target", "chaos-it", "seed-" + SEED + "-" + System.currentTimeMillis()).toAbsolutePath();
        ChaosReport report = ChaosRun.run(ChaosOptions.builder().seed(SEED).tasks(12).duration(Duration.ofSeconds(30))
                .budget(Duration.ofSeconds(85)).workdir(work).scripts(REPO_SCRIPTS).build(), System.out);
        assertThat(report.getProblems()).as("problems found (workdir %s)", work).isEmpty();
        assertThat(report.summary()).isEqualTo("chaos: 12 tasks, 12 succeeded exactly once, 0 lost, 0 duplicated, 0 overlapping, "
                + report.getResumedElsewhere() + " resumed from another worker's checkpoint");
        assertThat(report.isClean()).isTrue();
        assertThat(report.getResumedElsewhere()).as("runs resumed from another worker's checkpoint").isPositive();
    }
}
