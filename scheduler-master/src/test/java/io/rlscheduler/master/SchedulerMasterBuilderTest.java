package io.rlscheduler.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The builder's duration settings are checked against their ranges when set, not in start(). */
class SchedulerMasterBuilderTest {

    @Test
    void durationsOutsideTheirRangesAreRefusedBySetters() {
        // Found by review: only "positive" was checked. A 0.5 ms interval failed in start(), a
        // 0 ms leadership lease was renewed every millisecond (a new epoch and event each time),
        // and an apiTimeout beyond a long of nanoseconds threw ArithmeticException mid-call.
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
}
