package io.rlscheduler.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The builder's resource settings are checked as registration checks them, when set: found by
 * review, they were accepted and failed only in start(), after leftover processes were killed and
 * Redis connected, as a "retryable" failure that could never succeed.
 */
class SchedulerWorkerBuilderTest {

    @Test
    void gpuIdsMustBeDistinctAndInRange() {
        SchedulerWorker.Builder b = SchedulerWorker.builder();
        assertThatThrownBy(() -> b.gpuIds(-1)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("gpuIds");
        assertThatThrownBy(() -> b.gpuIds(0, 0)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("distinct");
        assertThatThrownBy(() -> b.gpuIds(1024)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("1023");
        assertThatThrownBy(() -> b.gpuIds(Arrays.asList(0, null))).isInstanceOf(IllegalArgumentException.class);
        assertThat(b.gpuIds(0, 3, 1023)).isSameAs(b);
        assertThat(b.gpuIds(List.of())).isSameAs(b);
    }

    @Test
    void memoryAndLabelsAreCheckedAsRegistrationAndSelectorsCheckThem() {
        SchedulerWorker.Builder b = SchedulerWorker.builder();
        assertThatThrownBy(() -> b.memoryBytes(1L << 50)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("memoryBytes");
        assertThat(b.memoryBytes(1L << 46)).isSameAs(b);
        assertThatThrownBy(() -> b.labels(Map.of("gpu model", "a100"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("label");
        assertThatThrownBy(() -> b.labels(Map.of("gpu", ""))).isInstanceOf(IllegalArgumentException.class);
        assertThat(b.labels(Map.of("gpu", "a100", "zone", "lab-2/rack.3"))).isSameAs(b);
    }

    @Test
    void killGraceAndBackoffAreBoundedWithTypedErrors() {
        SchedulerWorker.Builder b = SchedulerWorker.builder();
        assertThatThrownBy(() -> b.killGrace(Duration.ofHours(2))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("killGrace");
        assertThat(b.killGrace(Duration.ofHours(1))).isSameAs(b);
        assertThatThrownBy(() -> b.reconnectBackoff(Duration.ofMillis(100), null)).isInstanceOf(NullPointerException.class)
                .hasMessageContaining("max");
    }
}
