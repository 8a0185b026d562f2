package io.rlscheduler.bench.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Runs the failover benchmark once with leases shorter than its defaults (task lease 2 s): it
 * fails by itself unless the killed worker's processes died first and the task started exactly
 * twice; here its figures are checked against what the lease allows. Needs python3 and /proc.
 */
class FailoverIT {

    @Test
    void killedWorkersTaskRunsOnTheOtherWorkerAfterItsLease(@TempDir Path dir) throws Exception {
        Failover bench = new Failover();
        BenchParams params = new BenchParams(bench.name(), bench.parameters(), Map.of("runs", "1",
                "heartbeatMs", "400", "livenessMs", "1200", "taskLeaseMs", "2000", "workDir", dir.toString()));

        BenchResult result = bench.run(params);

        assertThat(result.getUnit()).isEqualTo("s");
        assertThat(result.getBaselineValue()).isEqualTo(2.0);
        // Not before the lease left at the kill (the lease minus at most one heartbeat) has run out.
        assertThat(result.getValue()).isGreaterThan(2.0 - 0.4);
        @SuppressWarnings("unchecked")
        Map<String, Object> run = ((List<Map<String, Object>>) result.getParams().get("per_run")).get(0);
        assertThat(run.get("running_on")).isNotEqualTo(run.get("killed_worker"));
        assertThat(dir).isEmptyDirectory();
    }
}
