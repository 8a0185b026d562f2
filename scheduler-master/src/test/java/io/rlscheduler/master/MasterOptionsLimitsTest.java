package io.rlscheduler.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.rlscheduler.core.CoreOptions;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The settings of the limits on authenticated workers: defaults, ranges, and the idle timeout against heartbeats. */
class MasterOptionsLimitsTest {

    @Test
    void defaultsAreGenerousAndTheIdleTimeoutIsThreeHeartbeatsAtLeastFiveSeconds() {
        MasterOptions defaults = MasterOptions.defaults();
        assertThat(defaults.getWorkerInboundRate()).isEqualTo(128L << 20);
        assertThat(defaults.getWorkerInboundBurst()).isEqualTo(128L << 20);
        assertThat(defaults.getMaxOpenAttemptsPerWorker()).isEqualTo(1024);
        assertThat(defaults.getOpenAttemptTimeout()).isEqualTo(Duration.ofMinutes(10));
        assertThat(defaults.getMaxLogBytesPerTask()).isEqualTo(4L << 30);
        assertThat(defaults.getWorkerIdleTimeout()).isEqualTo(Duration.ofSeconds(30));
        MasterOptions slow = MasterOptions.builder().coreOptions(CoreOptions.builder()
                .heartbeatInterval(Duration.ofSeconds(20)).livenessLease(Duration.ofMinutes(1)).build()).build();
        assertThat(slow.getWorkerIdleTimeout()).as("follows the heartbeat").isEqualTo(Duration.ofMinutes(1));
        MasterOptions fast = MasterOptions.builder()
                .coreOptions(CoreOptions.builder().heartbeatInterval(Duration.ofMillis(200)).build()).build();
        assertThat(fast.getWorkerIdleTimeout()).as("but not below 5 s").isEqualTo(Duration.ofSeconds(5));
    }

    @Test
    void valuesOutsideTheirRangesAreRefusedBySettersNamingTheSetting() {
        MasterOptions.Builder b = MasterOptions.builder();
        assertThatThrownBy(() -> b.workerInboundRate(1023)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("workerInboundRate").hasMessageContaining("1024");
        assertThatThrownBy(() -> b.workerInboundBurst(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("workerInboundBurst");
        assertThatThrownBy(() -> b.maxOpenAttemptsPerWorker(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxOpenAttemptsPerWorker");
        assertThatThrownBy(() -> b.openAttemptTimeout(Duration.ofMillis(99))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("openAttemptTimeout");
        assertThatThrownBy(() -> b.maxLogBytesPerTask(1000)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("maxLogBytesPerTask");
        assertThatThrownBy(() -> b.workerIdleTimeout(Duration.ofDays(2))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("workerIdleTimeout");
        assertThat(b.workerInboundRate(1024).workerInboundBurst(1L << 40).maxOpenAttemptsPerWorker(1_000_000)
                .openAttemptTimeout(Duration.ofMillis(100)).maxLogBytesPerTask(1024).build().getMaxLogBytesPerTask())
                .isEqualTo(1024);
    }

    @Test
    void anIdleTimeoutUnderTwoHeartbeatsIsRefusedByBuild() {
        MasterOptions.Builder b = MasterOptions.builder().workerIdleTimeout(Duration.ofSeconds(19));
        assertThatThrownBy(b::build).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("workerIdleTimeout").hasMessageContaining("heartbeat");
        MasterOptions ok = b.workerIdleTimeout(Duration.ofSeconds(20)).build();
        assertThat(ok.getWorkerIdleTimeout()).isEqualTo(Duration.ofSeconds(20));
        assertThat(ok.mutate().build().getWorkerIdleTimeout()).as("kept by mutate").isEqualTo(Duration.ofSeconds(20));
    }
}
