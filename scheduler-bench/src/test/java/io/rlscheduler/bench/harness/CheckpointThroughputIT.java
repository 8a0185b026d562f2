package io.rlscheduler.bench.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs both checkpoint benchmarks small (one round, every variant, no warm-up): each fails by
 * itself unless Redis points at every checkpoint committed and every copy or upload holds all the
 * files' bytes; here their figures are checked for shape. The S3 one runs with 6 MiB files and
 * 5 MiB parts, so that both it and the transfer manager upload in parts.
 */
class CheckpointThroughputIT {

    @Test
    void commitsIntoTheDirectoryStoreAndReportsEveryVariant(@TempDir Path dir) throws Exception {
        BenchResult result = run(new CheckpointThroughput(CheckpointThroughput.Kind.DIRECTORY),
                Map.of("sizeMiB", "16", "rounds", "1", "warmup", "0", "profile", "true", "workDir", dir.toString()));

        assertThat(result.getBaselineName()).isEqualTo("cp -r");
        assertThat(medians(result)).containsOnlyKeys("our commit", "cp -r", "store puts", "store puts, no fsync",
                "cp -r + sync", "sha256", "hard links");
        assertThat(dir).isEmptyDirectory();
    }

    @Test
    void commitsIntoTheS3StoreAndReportsEveryVariant(@TempDir Path dir) throws Exception {
        BenchResult result = run(new CheckpointThroughput(CheckpointThroughput.Kind.S3),
                Map.of("sizeMiB", "48", "partSizeMiB", "5", "thresholdMiB", "5", "rounds", "1", "warmup", "0",
                        "profile", "true", "workDir", dir.toString()));

        assertThat(result.getBaselineName()).isEqualTo("AWS SDK transfer manager");
        assertThat(medians(result)).containsOnlyKeys("our commit", "transfer manager", "store puts", "sha256",
                "hard links");
        assertThat(dir).isEmptyDirectory();
    }

    private static BenchResult run(CheckpointThroughput bench, Map<String, String> given) throws Exception {
        BenchResult result = bench.run(new BenchParams(bench.name(), bench.parameters(), given));
        assertThat(result.getUnit()).isEqualTo("GiB/s");
        assertThat(result.getValue()).isPositive();
        assertThat(result.getBaselineValue()).isPositive();
        assertThat(result.getParams()).containsKeys("median_cpu_s_per_gib", "runs_s", "cpu_last_round", "goal_met");
        assertThat(medians(result)).containsEntry("our commit", result.getValue());
        return result;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> medians(BenchResult result) {
        return (Map<String, Object>) result.getParams().get("median_gib_per_s");
    }
}
