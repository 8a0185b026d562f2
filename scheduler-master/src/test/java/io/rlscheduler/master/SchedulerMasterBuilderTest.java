package io.rlscheduler.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The builder's settings are checked when set, and a built master's options are its own. */
class SchedulerMasterBuilderTest {

    @Test
    void durationsOutsideTheirRangesAreRefusedBySetters() {
        // Each would otherwise fail later: a 0.5 ms interval in start(), a 10 ms leadership lease
        // renewed every few milliseconds, an apiTimeout beyond a long of nanoseconds mid-call.
        SchedulerMaster.Builder b = SchedulerMaster.builder();
        assertThatThrownBy(() -> b.reapInterval(Duration.ofNanos(500_000))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reapInterval").hasMessageContaining("0.001s to 1h");
        assertThatThrownBy(() -> b.dispatchInterval(Duration.ofDays(2))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("dispatchInterval");
        assertThatThrownBy(() -> b.handshakeTimeout(Duration.ofMillis(1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("handshakeTimeout");
        assertThatThrownBy(() -> b.leaderLease(Duration.ofMillis(10))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaderLease").hasMessageContaining("0.1s to 1h");
        assertThatThrownBy(() -> b.apiTimeout(Duration.ofSeconds(Long.MAX_VALUE))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("apiTimeout").hasMessageContaining("24h");
        assertThatThrownBy(() -> b.apiTimeout(null)).isInstanceOf(NullPointerException.class).hasMessageContaining("apiTimeout");
        // The ends of each range are accepted.
        assertThat(b.reapInterval(Duration.ofMillis(1)).dispatchInterval(Duration.ofHours(1))
                .handshakeTimeout(Duration.ofMillis(10)).leaderLease(Duration.ofMillis(100)).apiTimeout(Duration.ofDays(1)))
                .isSameAs(b);
    }

    @Test
    void aSetterCalledAfterBuildChangesNoMasterAlreadyBuilt() {
        SchedulerMaster.Builder b = SchedulerMaster.builder().redis(io.lettuce.core.RedisURI.create("redis://127.0.0.1:1"))
                .secret("0123456789abcdef-secret").rpcPort(0).apiTimeout(Duration.ofSeconds(5));
        try (SchedulerMaster built = b.build()) {
            b.rpcPort(9100).apiTimeout(Duration.ofSeconds(9)).standbyOnly(true);
            MasterOptions options = built.getOptions();
            assertThat(options.getRpcPort()).isZero();
            assertThat(options.getApiTimeout()).isEqualTo(Duration.ofSeconds(5));
            assertThat(options.isStandbyOnly()).isFalse();
            assertThat(b.build().getOptions().getRpcPort()).isEqualTo(9100);
        }
    }

    @Test
    void optionsSetWholeReplaceTheSettersAndMutateKeepsTheRest() {
        MasterOptions base = MasterOptions.builder().dispatchBatch(4).leaderLease(Duration.ofSeconds(3)).build();
        MasterOptions changed = base.mutate().dispatchBatch(8).build();
        assertThat(changed.getDispatchBatch()).isEqualTo(8);
        assertThat(changed.getLeaderLease()).isEqualTo(Duration.ofSeconds(3));
        assertThat(base.getDispatchBatch()).isEqualTo(4);
        assertThat(MasterOptions.defaults().getReapInterval()).isEqualTo(MasterOptions.DEFAULT_REAP_INTERVAL);
        SchedulerMaster.Builder b = SchedulerMaster.builder().redis(io.lettuce.core.RedisURI.create("redis://127.0.0.1:1"))
                .secret("0123456789abcdef-secret").dispatchBatch(99).options(base);
        try (SchedulerMaster built = b.build()) {
            assertThat(built.getOptions().getDispatchBatch()).isEqualTo(4);
            assertThat(built.isShutdown()).isFalse();
        }
    }
}
