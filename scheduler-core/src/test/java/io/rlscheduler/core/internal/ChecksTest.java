package io.rlscheduler.core.internal;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class ChecksTest {

    @Test
    void aDurationInsideItsRangeIsReturnedAndOneOutsideIsNamed() {
        Duration min = Duration.ofMillis(1);
        Duration max = Duration.ofHours(1);
        assertThat(Checks.range(Duration.ofSeconds(5), min, max, "reapInterval")).isEqualTo(Duration.ofSeconds(5));
        assertThat(Checks.range(min, min, max, "reapInterval")).isEqualTo(min);
        assertThat(Checks.range(max, min, max, "reapInterval")).isEqualTo(max);
        assertThatThrownBy(() -> Checks.range(Duration.ofNanos(500_000), min, max, "reapInterval"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("reapInterval must be 0.001s to 1h, was PT0.0005S");
        assertThatThrownBy(() -> Checks.range(Duration.ofHours(2), min, max, "reapInterval"))
                .hasMessage("reapInterval must be 0.001s to 1h, was PT2H");
        assertThatThrownBy(() -> Checks.range((Duration) null, min, max, "reapInterval"))
                .isInstanceOf(NullPointerException.class).hasMessage("reapInterval");
    }

    @Test
    void anIntInsideItsRangeIsReturnedAndOneOutsideIsNamed() {
        assertThat(Checks.range(16, 1, 1000, "dispatchBatch")).isEqualTo(16);
        assertThatThrownBy(() -> Checks.range(0, 1, 1000, "dispatchBatch"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("dispatchBatch must be between 1 and 1000, was 0");
    }
}
