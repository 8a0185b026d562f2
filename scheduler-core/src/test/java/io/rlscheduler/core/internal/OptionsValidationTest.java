package io.rlscheduler.core.internal;

import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskIds;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class OptionsValidationTest {

    @Test
    void defaultsAreTheSeedsLeases() {
        CoreOptions o = CoreOptions.defaults();
        assertThat(o.getHeartbeatInterval()).isEqualTo(Duration.ofSeconds(10));
        assertThat(o.getLivenessLease()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.getTaskLease()).isEqualTo(Duration.ofSeconds(120));
        assertThat(o.getNamespace()).isEqualTo("rls");
        assertThat(o.mutate().build().toString()).isEqualTo(o.toString());
    }

    @Test
    void leaseOrderIsCheckedAcrossFields() {
        assertThatThrownBy(() -> CoreOptions.builder().heartbeatInterval(Duration.ofSeconds(30)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("heartbeatInterval");
        assertThatThrownBy(() -> CoreOptions.builder().livenessLease(Duration.ofSeconds(200)).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("taskLease");
    }

    @Test
    void settersRejectBadValuesAtOnce() {
        assertThatThrownBy(() -> CoreOptions.builder().taskLease(Duration.ZERO)).hasMessageContaining("at least 1 ms");
        assertThatThrownBy(() -> CoreOptions.builder().ackTimeout(Duration.ofMillis(-5))).hasMessageContaining("ackTimeout");
        assertThatThrownBy(() -> CoreOptions.builder().namespace("a}b")).hasMessageContaining("namespace");
        assertThatThrownBy(() -> CoreOptions.builder().namespace("")).hasMessageContaining("namespace");
        assertThatThrownBy(() -> CoreOptions.builder().maxAttempts(0)).hasMessageContaining("maxAttempts");
        assertThatThrownBy(() -> CoreOptions.builder().claimScanLimit(0)).hasMessageContaining("claimScanLimit");
    }

    @Test
    void taskIdsThatCouldEscapeADirectoryAreRejected() {
        for (String bad : new String[] {"../x", "a/b", "..", ".hidden", "", "a b", "x".repeat(129), "é"}) {
            assertThat(TaskIds.isValid(bad)).as(bad).isFalse();
            assertThatThrownBy(() -> TaskDefinition.builder(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("task id");
        }
        assertThat(TaskIds.isValid("run-1.v2_final")).isTrue();
        assertThat(TaskIds.isValid(TaskIds.random())).isTrue();
    }

    @Test
    void taskDefinitionRejectsImpossibleResources() {
        assertThatThrownBy(() -> TaskDefinition.builder("t").gpus(-1)).hasMessageContaining("gpus");
        assertThatThrownBy(() -> TaskDefinition.builder("t").gpus(65)).hasMessageContaining("gpus");
        assertThatThrownBy(() -> TaskDefinition.builder("t").cpuSlots(0)).hasMessageContaining("cpuSlots");
        assertThatThrownBy(() -> TaskDefinition.builder("t").memoryBytes(-1)).hasMessageContaining("memoryBytes");
        assertThatThrownBy(() -> TaskDefinition.builder("t").memoryBytes(TaskDefinition.MAX_MEMORY_BYTES + 1))
                .hasMessageContaining("memoryBytes");
        assertThatThrownBy(() -> TaskDefinition.builder("t").priority(1000)).hasMessageContaining("priority");
        assertThatThrownBy(() -> TaskDefinition.builder("t").selector("gpu", "a 100")).hasMessageContaining("selector");
        assertThatThrownBy(() -> TaskDefinition.builder("t").owner("../root")).hasMessageContaining("owner");
        assertThatThrownBy(() -> TaskDefinition.builder("t").traceId("has space")).hasMessageContaining("traceId");
    }

    @Test
    void taskDefinitionDefaults() {
        TaskDefinition t = TaskDefinition.builder("t").build();
        assertThat(t.getCpuSlots()).isEqualTo(1);
        assertThat(t.getGpus()).isZero();
        assertThat(t.getOwner()).isEqualTo("anonymous");
        assertThat(t.getTraceId()).isNotEmpty();
        assertThat(t.getSpecJson()).isEqualTo("{}");
    }

    @Test
    void workerRegistrationRejectsBadResources() {
        assertThatThrownBy(() -> new WorkerRegistration("w", "s", Map.of(), 0, 0, List.of())).hasMessageContaining("cpuSlots");
        assertThatThrownBy(() -> new WorkerRegistration("w", "s", Map.of(), 1, 0, List.of(0, 0))).hasMessageContaining("gpuIds");
        assertThatThrownBy(() -> new WorkerRegistration("w", "s", Map.of(), 1, 0, List.of(-1))).hasMessageContaining("gpuIds");
        assertThatThrownBy(() -> new WorkerRegistration("w/1", "s", Map.of(), 1, 0, List.of())).hasMessageContaining("worker id");
        assertThat(new WorkerRegistration("w", "s", Map.of(), 1, 0, List.of(3, 1)).getGpuIds()).containsExactly(1, 3);
    }
}
