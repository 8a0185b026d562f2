package io.rlscheduler.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisURI;
import io.rlscheduler.core.CoreOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The builder checks each setting when it is set (resources as registration checks them, so that
 * start() never fails on them after killing leftover processes and reaching Redis), and the worker
 * it builds keeps an immutable {@link WorkerOptions} value.
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

    @Test
    void aSetterCalledAfterBuildDoesNotChangeTheBuiltWorker() throws Exception {
        SchedulerWorker.Builder b = SchedulerWorker.builder().masters("m1:9000").redis(RedisURI.create("redis://localhost:1"))
                .workerId("w-1").secret("0123456789abcdef-secret").cpuSlots(2).killGrace(Duration.ofSeconds(3))
                .runRoot(Path.of("runs-a")).executor((context, output) -> {
                    throw new TaskLaunchException("not used", null);
                });
        SchedulerWorker worker = b.build();
        try {
            WorkerOptions before = worker.getOptions();
            String described = before.toString();

            b.masters("m2:9000").workerId("w-2").cpuSlots(7).killGrace(Duration.ofSeconds(9)).runRoot(Path.of("runs-b"))
                    .logBatchLines(5).coreOptions(CoreOptions.builder().namespace("other").build());

            assertThat(worker.getOptions()).isSameAs(before);
            assertThat(before.toString()).isEqualTo(described);
            assertThat(worker.getWorkerId()).isEqualTo("w-1");
            assertThat(before.getCpuSlots()).isEqualTo(2);
            assertThat(before.getKillGrace()).isEqualTo(Duration.ofSeconds(3));
            assertThat(before.getRunRoot()).isEqualTo(Path.of("runs-a"));
            assertThat(before.getStateDirectory()).isEqualTo(Path.of("runs-a", ".worker", "w-1"));
            assertThat(before.getLogBatchLines()).isEqualTo(WorkerOptions.DEFAULT_LOG_BATCH_LINES);
            assertThat(before.getCoreOptions().getNamespace()).isEqualTo(CoreOptions.DEFAULT_NAMESPACE);
            SchedulerWorker second = b.build();
            second.shutdown();
            assertThat(second.getOptions().getWorkerId()).as("the builder itself changed").isEqualTo("w-2");
        } finally {
            worker.shutdown();
        }
        assertThat(worker.isShutdown()).isTrue();
        assertThat(worker.isTerminated()).isTrue();
    }
}
