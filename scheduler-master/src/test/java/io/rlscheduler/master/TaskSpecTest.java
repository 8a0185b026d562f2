package io.rlscheduler.master;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class TaskSpecTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void specCarriesScriptParametersInOrderAndResources() throws Exception {
        TaskSpec spec = TaskSpec.python("rl/train.py").taskId("run-1").traceId("tr-1")
                .param("algo", "q-learning").param("lr", 0.1).param("episodes", 500L).param("render", false)
                .arg("--verbose").env("OMP_NUM_THREADS", "2")
                .gpus(2).cpuSlots(4).memoryBytes(1L << 30).priority(7).selector("gpu", "a100").owner("alice")
                .timeout(Duration.ofHours(2)).maxAttempts(5).build();
        assertThat(spec.getTaskId()).isEqualTo("run-1");
        assertThat(spec.getParameters().keySet()).containsExactly("algo", "lr", "episodes", "render");
        assertThat(spec.toDefinition().getGpus()).isEqualTo(2);
        assertThat(spec.toDefinition().getCpuSlots()).isEqualTo(4);
        assertThat(spec.toDefinition().getPriority()).isEqualTo(7);
        assertThat(spec.toDefinition().getSelector()).containsEntry("gpu", "a100");
        assertThat(spec.toDefinition().getMaxAttempts()).isEqualTo(5);
        JsonNode json = JSON.readTree(spec.toDefinition().getSpecJson());
        assertThat(json.get("script").asText()).isEqualTo("rl/train.py");
        assertThat(json.get("parameters").toString()).isEqualTo("{\"algo\":\"q-learning\",\"lr\":0.1,\"episodes\":500,\"render\":false}");
        assertThat(json.get("timeoutMs").asLong()).isEqualTo(7_200_000);
        assertThat(json.get("traceId").asText()).isEqualTo("tr-1");
        assertThat(json.get("owner").asText()).isEqualTo("alice");
        assertThat(json.get("arguments").get(0).asText()).isEqualTo("--verbose");
        assertThat(json.get("environment").get("OMP_NUM_THREADS").asText()).isEqualTo("2");
    }

    @Test
    void defaultsGiveARandomIdAndTrace() {
        TaskSpec a = TaskSpec.python("train.py").build();
        TaskSpec b = TaskSpec.python("train.py").build();
        assertThat(a.getTaskId()).isNotEqualTo(b.getTaskId());
        assertThat(a.getTraceId()).isNotEmpty();
        assertThat(a.getOwner()).isEqualTo("anonymous");
        assertThat(a.getTimeout()).isNull();
    }

    @Test
    void badScriptPathsAreRejectedWithAClearMessage() {
        for (String bad : new String[] {"", "/abs/train.py", "../train.py", "a/../../b.py", "./train.py", "a/./b.py",
                "dir/", "train.py; rm -rf /", "tr ain.py"}) {
            assertThatThrownBy(() -> TaskSpec.python(bad)).as(bad)
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("script");
        }
        assertThatThrownBy(() -> TaskSpec.python(null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void impossibleResourcesAreRejected() {
        assertThatThrownBy(() -> TaskSpec.python("t.py").gpus(-1)).hasMessageContaining("gpus");
        assertThatThrownBy(() -> TaskSpec.python("t.py").gpus(1000)).hasMessageContaining("gpus");
        assertThatThrownBy(() -> TaskSpec.python("t.py").cpuSlots(0)).hasMessageContaining("cpuSlots");
        assertThatThrownBy(() -> TaskSpec.python("t.py").memoryBytes(-5)).hasMessageContaining("memoryBytes");
        assertThatThrownBy(() -> TaskSpec.python("t.py").priority(-1)).hasMessageContaining("priority");
        assertThatThrownBy(() -> TaskSpec.python("t.py").timeout(Duration.ofMillis(10))).hasMessageContaining("timeout");
        assertThatThrownBy(() -> TaskSpec.python("t.py").maxAttempts(0)).hasMessageContaining("maxAttempts");
    }

    @Test
    void badParameterNamesAndValuesAreRejected() {
        assertThatThrownBy(() -> TaskSpec.python("t.py").param("", 1L)).hasMessageContaining("parameter name");
        assertThatThrownBy(() -> TaskSpec.python("t.py").param("-lr", 1L)).hasMessageContaining("parameter name");
        assertThatThrownBy(() -> TaskSpec.python("t.py").param("l r", 1L)).hasMessageContaining("parameter name");
        assertThatThrownBy(() -> TaskSpec.python("t.py").param("lr", Double.NaN)).hasMessageContaining("finite");
        assertThatThrownBy(() -> TaskSpec.python("t.py").param("lr", Double.POSITIVE_INFINITY)).hasMessageContaining("finite");
        assertThatThrownBy(() -> TaskSpec.python("t.py").param("note", "two\nlines")).hasMessageContaining("one line");
        assertThatThrownBy(() -> TaskSpec.python("t.py").param("note", (String) null)).hasMessageContaining("one line");
    }

    @Test
    void aParameterOrEnvironmentVariableGivenAgainReplacesItsValueInItsPlace() throws Exception {
        TaskSpec spec = TaskSpec.python("t.py").param("lr", 0.1).param("seed", 7L).env("MODE", "fast")
                .param("lr", "warmup").env("MODE", "slow").param("LR", 0.3).build();
        assertThat(spec.getParameters()).as("names are case-sensitive").containsExactly(
                org.assertj.core.api.Assertions.entry("lr", "warmup"), org.assertj.core.api.Assertions.entry("seed", 7L),
                org.assertj.core.api.Assertions.entry("LR", 0.3));
        assertThat(spec.getEnvironment()).containsExactly(org.assertj.core.api.Assertions.entry("MODE", "slow"));
        assertThat(new com.fasterxml.jackson.databind.ObjectMapper().readTree(spec.toDefinition().getSpecJson())
                .get("parameters").toString()).isEqualTo("{\"lr\":\"warmup\",\"seed\":7,\"LR\":0.3}");
    }

    @Test
    void aTimeoutBeyondAYearIsRejectedByTheSetter() {
        // Refused by the setter: a far longer timeout would overflow a long of milliseconds at build().
        assertThatThrownBy(() -> TaskSpec.python("t.py").timeout(java.time.temporal.ChronoUnit.FOREVER.getDuration()))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("365 days");
        assertThat(TaskSpec.python("t.py").timeout(java.time.Duration.ofDays(365)).build()).isNotNull();
    }

    @Test
    void aSpecTooLargeToStartOrSendIsRejectedAtBuild() {
        // Each value is bounded, and so is the spec as a whole: 100 parameters of 4 KB could not be
        // sent in one frame or passed as arguments, so build() refuses them.
        TaskSpec.Builder big = TaskSpec.python("t.py").taskId("big-1");
        String value = "x".repeat(4000);
        for (int i = 0; i < 64; i++) {
            big.param("p" + i, value);
        }
        assertThat(big.build().getTaskId()).as("256 KB of parameters fit").isEqualTo("big-1");
        for (int i = 64; i < 100; i++) {
            big.param("p" + i, value);
        }
        assertThatThrownBy(big::build).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("big-1").hasMessageContaining("at most " + TaskSpec.MAX_SPEC_BYTES);
    }

    @Test
    void badSelectorsAndReservedEnvironmentAreRejected() {
        assertThatThrownBy(() -> TaskSpec.python("t.py").selector("gpu model", "a100")).hasMessageContaining("selector");
        assertThatThrownBy(() -> TaskSpec.python("t.py").selector("gpu", "")).hasMessageContaining("selector");
        assertThatThrownBy(() -> TaskSpec.python("t.py").env("CUDA_VISIBLE_DEVICES", "0")).hasMessageContaining("CUDA_VISIBLE_DEVICES");
        assertThatThrownBy(() -> TaskSpec.python("t.py").env("RLS_RUN_DIR", "/")).hasMessageContaining("RLS_");
        // Refused here because the worker would refuse it at every attempt.
        assertThatThrownBy(() -> TaskSpec.python("t.py").env("CUDA_DEVICE_ORDER", "FASTEST_FIRST"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("CUDA_DEVICE_ORDER");
        assertThatThrownBy(() -> TaskSpec.python("t.py").env("1BAD", "x")).hasMessageContaining("environment");
        assertThatThrownBy(() -> TaskSpec.python("t.py").taskId("../x")).hasMessageContaining("task id");
        assertThatThrownBy(() -> TaskSpec.python("t.py").owner("a b")).hasMessageContaining("owner");
    }
}
