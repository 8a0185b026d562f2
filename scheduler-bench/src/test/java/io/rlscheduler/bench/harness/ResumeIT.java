package io.rlscheduler.bench.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the resume benchmark once each way with a small checkpoint and short leases (task lease
 * 2 s): it fails by itself unless the other worker's attempt found exactly the committed
 * checkpoint's files in its checkpoint directory (none without one); here the runs are checked
 * for shape. Needs python3 and /proc.
 */
class ResumeIT {

    @Test
    void killedWorkersTaskResumesOnTheOtherWorkerFromItsCheckpoint(@TempDir Path dir) throws Exception {
        Resume bench = new Resume();
        BenchParams params = new BenchParams(bench.name(), bench.parameters(), Map.of("runs", "1", "sizeMiB", "16",
                "heartbeatMs", "400", "livenessMs", "1200", "taskLeaseMs", "2000", "workDir", dir.toString()));

        BenchResult result = bench.run(params);

        assertThat(result.getUnit()).isEqualTo("s");
        assertThat(result.getValue()).isPositive();
        assertThat(result.getBaselineValue()).isPositive();
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> runs = (List<Map<String, Object>>) result.getParams().get("per_run");
        assertThat(runs).hasSize(2).extracting(r -> r.get("checkpoint")).containsExactly(true, false);
        for (Map<String, Object> run : runs) {
            assertThat(run.get("resumed_on")).isNotEqualTo(run.get("killed_worker"));
        }
        assertThat(((Number) runs.get(0).get("restore_ms")).longValue()).isNotNegative();
        assertThat(dir).isEmptyDirectory();
    }
}
