package io.rlscheduler.bench.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the log-stream benchmark small (5,000 lines, no warm-up): it fails by itself unless the
 * master's file and the follower got every line exactly once, in order; here only its figures are
 * checked for shape. Needs python3.
 */
class LogStreamIT {

    @Test
    void streamsEveryLineAndReportsBothRates(@TempDir Path dir) throws Exception {
        LogStream bench = new LogStream();
        BenchParams params = new BenchParams(bench.name(), bench.parameters(),
                Map.of("lines", "5000", "warmupLines", "0", "rounds", "2", "workDir", dir.toString()));

        BenchResult result = bench.run(params);

        assertThat(result.getUnit()).isEqualTo("lines/s");
        assertThat(result.getValue()).isPositive();
        assertThat(result.getBaselineValue()).isPositive();
        assertThat(result.getParams()).containsKeys("file_lines_per_s", "follower_lines_per_s", "cpu", "log_path");
        assertThat(result.getValue()).isEqualTo(Math.min((double) result.getParams().get("file_lines_per_s"),
                (double) result.getParams().get("follower_lines_per_s")));
        assertThat(result.getParams().get("rounds_file_lines_per_s")).asList().hasSize(2);
        assertThat(result.getParams().get("rounds_baseline_lines_per_s")).asList().hasSize(2)
                .contains(result.getBaselineValue());
        assertThat(result.getParams().get("rounds_file_lines_per_s")).asList()
                .contains(result.getParams().get("file_lines_per_s"));
        assertThat(dir).isEmptyDirectory();
    }
}
