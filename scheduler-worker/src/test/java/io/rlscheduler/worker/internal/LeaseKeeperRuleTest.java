package io.rlscheduler.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.rlscheduler.core.CoreOptions;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** When an idle worker leaves its liveness renewal to the master ({@link LeaseKeeper#leftToMaster}). */
class LeaseKeeperRuleTest {

    private static CoreOptions leases(long heartbeatMs, long livenessMs) {
        return CoreOptions.builder().heartbeatInterval(Duration.ofMillis(heartbeatMs)).livenessLease(Duration.ofMillis(livenessMs))
                .taskLease(Duration.ofMillis(Math.max(livenessMs, 120_000))).build();
    }

    private static long ms(long millis) {
        return Duration.ofMillis(millis).toNanos();
    }

    @Test
    void theMastersRenewalOfThePreviousHeartbeatIsLeftToButNotAnOlderOne() {
        CoreOptions defaults = leases(10_000, 30_000);
        assertThat(LeaseKeeper.leftToMaster(defaults, ms(10_000))).as("the previous heartbeat's").isTrue();
        assertThat(LeaseKeeper.leftToMaster(defaults, ms(15_000))).as("half an interval late").isTrue();
        assertThat(LeaseKeeper.leftToMaster(defaults, ms(15_001))).isFalse();
        assertThat(LeaseKeeper.leftToMaster(defaults, ms(20_000))).as("the one before it: renew yourself").isFalse();
    }

    @Test
    void aLeaseShorterThanThreeIntervalsIsNeverLeftToTheMaster() {
        assertThat(LeaseKeeper.leftToMaster(leases(1_000, 3_000), ms(1_000))).isTrue();
        assertThat(LeaseKeeper.leftToMaster(leases(1_000, 2_999), ms(1))).isFalse();
        assertThat(LeaseKeeper.leftToMaster(leases(1_000, 2_000), ms(1))).isFalse();
    }
}
