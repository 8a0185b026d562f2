package io.rlscheduler.bench.harness;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The heartbeats benchmark end to end, small: 50 simulated workers heartbeating once a second for
 * 3 measured seconds against a master in its own JVM and a redis-server of the testkit (or
 * {@code REDIS_URL}). {@link Heartbeats#run} itself fails unless every worker stayed IDLE and every
 * heartbeat was answered; this checks the figures it reports.
 */
class HeartbeatsIT {

    @Test
    @SuppressWarnings("unchecked")
    void fiftyWorkersStayIdleAndEveryHeartbeatIsAnswered() throws Exception {
        Heartbeats benchmark = new Heartbeats();
        BenchParams params = new BenchParams(benchmark.name(), benchmark.parameters(),
                Map.of("workers", "50", "duration", "3", "warmup", "1", "checkEvery", "1"));

        BenchResult result = benchmark.run(params);

        assertThat(result.getName()).isEqualTo("heartbeats");
        assertThat(result.getUnit()).isEqualTo("heartbeats/s");
        assertThat(result.getBaselineValue()).isEqualTo(50.0);
        // Phases spread evenly over the second: a 3 s window holds 150 heartbeats, give or take the
        // few whose acknowledgement crosses one of its edges.
        assertThat(result.getValue()).isBetween(40.0, 60.0);
        Map<String, Object> p = result.getParams();
        assertThat(p).containsEntry("falsely_pending_or_down", 0).containsEntry("liveness_lapses", 0)
                .containsEntry("heartbeats_lost", 0L).containsEntry("disconnects", 0L);
        assertThat((int) p.get("state_checks")).isGreaterThanOrEqualTo(3);
        assertThat((Map<String, Object>) p.get("handling_ms")).containsKeys("p50", "p99", "max");
        // Idle workers leave their renewals to the master, which renews each heartbeat's worker: about
        // 50 a second, like the heartbeats; the workers' own renewals, if any, have their round trips.
        assertThat((double) p.get("master_renewals_per_s")).isBetween(40.0, 60.0);
        assertThat((Map<String, Object>) p.get("redis_renewal_ms")).containsKey("samples");
        Map<String, Object> master = (Map<String, Object>) p.get("master");
        assertThat((double) master.get("cpu_cores")).isPositive();
        assertThat((double) master.get("heap_peak_mib")).isBetween(1.0, 1024.0);
        assertThat((double) master.get("heap_max_mib")).isLessThanOrEqualTo(1024.0);
        assertThat(p).containsKeys("goal", "goal_met", "redis_commands_per_heartbeat", "clients_jvm_cores");
    }
}
