package io.rlscheduler.worker;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisURI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class WorkerOptionsTest {

    private static WorkerOptions.Builder complete() {
        return WorkerOptions.builder().masters("m:9000").workerId("w-1").secret("0123456789abcdef-secret");
    }

    @Test
    void unsetSettingsHaveTheirDefaults() {
        WorkerOptions o = complete().build();
        assertThat(o.getKillGrace()).isEqualTo(WorkerOptions.DEFAULT_KILL_GRACE);
        assertThat(o.getReconnectMin()).isEqualTo(WorkerOptions.DEFAULT_RECONNECT_MIN);
        assertThat(o.getReconnectMax()).isEqualTo(WorkerOptions.DEFAULT_RECONNECT_MAX);
        assertThat(o.getLogFlushInterval()).isEqualTo(WorkerOptions.DEFAULT_LOG_FLUSH_INTERVAL);
        assertThat(o.getLogBatchLines()).isEqualTo(WorkerOptions.DEFAULT_LOG_BATCH_LINES);
        assertThat(o.getMaxBufferedLines()).isEqualTo(WorkerOptions.DEFAULT_MAX_BUFFERED_LINES);
        assertThat(o.getScriptRoots()).containsExactly(WorkerOptions.DEFAULT_SCRIPT_ROOT);
        assertThat(o.getRunRoot()).isEqualTo(WorkerOptions.DEFAULT_RUN_ROOT);
        assertThat(o.getStateDirectory()).isEqualTo(Path.of("runs", ".worker", "w-1"));
        assertThat(o.getNvidiaSmi()).isEqualTo(WorkerOptions.DEFAULT_NVIDIA_SMI);
        assertThat(o.getGpuIds()).as("detected").isEmpty();
        assertThat(o.getMemoryBytes()).as("detected").isEmpty();
        assertThat(o.getRedisUri()).isEmpty();
        assertThat(o.getCpuSlots()).isEqualTo(Runtime.getRuntime().availableProcessors());
    }

    @Test
    void mutateCopiesEverySettingAndChangesOnlyTheCopy() {
        WorkerOptions o = complete().redis(RedisURI.create("redis://r:6379")).gpuIds(0, 2).cpuSlots(3)
                .memoryBytes(1 << 20).killGrace(Duration.ofSeconds(2)).logBatchLines(9).build();
        WorkerOptions copy = o.mutate().build();
        assertThat(copy.toString()).isEqualTo(o.toString());
        assertThat(copy.getSecret()).isEqualTo(o.getSecret());

        WorkerOptions changed = o.mutate().cpuSlots(5).build();
        assertThat(changed.getCpuSlots()).isEqualTo(5);
        assertThat(o.getCpuSlots()).isEqualTo(3);
        assertThat(changed.getGpuIds()).contains(List.of(0, 2));
    }

    @Test
    void theSecretCannotBeChangedThroughItsArray() {
        byte[] secret = "0123456789abcdef-secret".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        WorkerOptions o = complete().secret(secret).build();
        secret[0] = 'X';
        o.getSecret()[1] = 'Y';
        assertThat(new String(o.getSecret(), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("0123456789abcdef-secret");
        assertThat(o.toString()).doesNotContain("0123456789abcdef");
    }

    @Test
    void buildNamesTheMissingRequiredSetting() {
        assertThatThrownBy(() -> WorkerOptions.builder().workerId("w").secret("0123456789abcdef-secret").build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("master");
        assertThatThrownBy(() -> WorkerOptions.builder().masters("m:1").secret("0123456789abcdef-secret").build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("worker id");
        assertThatThrownBy(() -> WorkerOptions.builder().masters("m:1").workerId("w").build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("secret");
    }

    @Test
    void aWorkerKeyStandsInForTheSecretAndMustBeThisWorkersOwn() {
        String material = io.rlscheduler.protocol.WorkerKey.of("w-1", "k-1", new byte[32]).toMaterial();
        WorkerOptions keyed = WorkerOptions.builder().masters("m:1").workerId("w-1").workerKey(material).build();
        assertThat(keyed.getWorkerKey()).hasValueSatisfying(k -> assertThat(k.getKeyId()).isEqualTo("k-1"));
        assertThat(keyed.getSecret()).isEmpty();
        assertThat(keyed.toString()).contains("k-1").doesNotContain(material.substring(material.lastIndexOf(':') + 1));
        assertThat(keyed.mutate().build().getWorkerKey()).isEqualTo(keyed.getWorkerKey());

        assertThatThrownBy(() -> WorkerOptions.builder().masters("m:1").workerId("w-2").workerKey(material).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("is worker w-1's, not worker w-2's");
        assertThatThrownBy(() -> WorkerOptions.builder().workerKey("0123456789abcdef-secret"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("not a worker key");

        WorkerOptions filed = keyed.mutate().workerKeyFile(Path.of("/etc/rls/worker.key")).build();
        assertThat(filed.getWorkerKey()).as("a file replaces a key set before").isEmpty();
        assertThat(filed.getWorkerKeyFile()).contains(Path.of("/etc/rls/worker.key"));
        assertThat(complete().workerKeyFile(Path.of("k")).workerKey(material).build().getWorkerKeyFile()).isEmpty();
    }

    @Test
    void rangesAreCheckedInTheSetter() {
        WorkerOptions.Builder b = WorkerOptions.builder();
        assertThatThrownBy(() -> b.killGrace(Duration.ofSeconds(-1))).hasMessage("killGrace must be 0s to 1h, was PT-1S");
        assertThatThrownBy(() -> b.logFlushInterval(Duration.ZERO)).hasMessageContaining("logFlushInterval");
        assertThatThrownBy(() -> b.logBatchLines(0)).hasMessageContaining("logBatchLines");
        assertThatThrownBy(() -> b.logBatchLines(100_001)).hasMessageContaining("logBatchLines");
        assertThatThrownBy(() -> b.maxBufferedLines(99)).hasMessageContaining("maxBufferedLines");
        assertThatThrownBy(() -> b.cpuSlots(0)).hasMessageContaining("cpuSlots");
        assertThatThrownBy(() -> b.reconnectBackoff(Duration.ZERO, Duration.ofSeconds(1))).hasMessageContaining("min");
        assertThatThrownBy(() -> b.reconnectBackoff(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .hasMessageContaining("max");
        assertThatThrownBy(() -> b.masters("no-port")).hasMessageContaining("host:port");
        assertThatThrownBy(() -> b.masters("h:70000")).hasMessageContaining("65535");
        assertThatThrownBy(() -> b.masters()).hasMessageContaining("at least one master");
    }
}
