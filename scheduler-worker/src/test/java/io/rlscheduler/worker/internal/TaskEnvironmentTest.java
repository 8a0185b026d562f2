package io.rlscheduler.worker.internal;

import io.rlscheduler.worker.TaskContext;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

class TaskEnvironmentTest {

    private static TaskContext context(List<Integer> gpus, Map<String, String> env) {
        return new TaskContext("t1", 9, 2, "trace-1", "train.py", List.of(), Map.of(), gpus, env,
                Path.of("/runs/t1/attempt-2"), Path.of("/runs/t1/checkpoints"),
                Path.of("/runs/t1/attempt-2/params.json"), null);
    }

    @Test
    void setsExactlyTheReservedGpusAndTheRunVariables() {
        Map<String, String> env = TaskEnvironment.variables(context(List.of(0, 3), Map.of("WANDB_MODE", "offline")));
        assertThat(env).containsExactly(
                entry("CUDA_VISIBLE_DEVICES", "0,3"),
                entry("CUDA_DEVICE_ORDER", "PCI_BUS_ID"),
                entry("PYTHONUNBUFFERED", "1"),
                entry("RLS_TASK_ID", "t1"),
                entry("RLS_ATTEMPT", "2"),
                entry("RLS_EPOCH", "9"),
                entry("RLS_TRACE_ID", "trace-1"),
                entry("RLS_RUN_DIR", "/runs/t1/attempt-2"),
                entry("RLS_CHECKPOINT_DIR", "/runs/t1/checkpoints"),
                entry("RLS_PARAMS_FILE", "/runs/t1/attempt-2/params.json"),
                entry("WANDB_MODE", "offline"));
    }

    @Test
    void noGpusHidesThemAll() {
        assertThat(TaskEnvironment.variables(context(List.of(), Map.of()))).containsEntry("CUDA_VISIBLE_DEVICES", "");
    }

    @Test
    void theSpecCannotOverrideReservedKeys() {
        for (String key : List.of("CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", "RLS_TASK_ID", "RLS_EPOCH", "RLS_X")) {
            assertThatThrownBy(() -> TaskEnvironment.variables(context(List.of(1), Map.of(key, "0"))))
                    .as(key).isInstanceOf(IllegalArgumentException.class).hasMessageContaining(key);
        }
    }

    @Test
    void theSpecMaySetOrdinaryKeysIncludingPythonUnbuffered() {
        assertThat(TaskEnvironment.variables(context(List.of(), Map.of("PYTHONUNBUFFERED", "0", "rls_lower", "x"))))
                .containsEntry("PYTHONUNBUFFERED", "0").containsEntry("rls_lower", "x");
    }

    @Test
    void refusesMalformedKeysAndValues() {
        assertThatThrownBy(() -> TaskEnvironment.variables(context(List.of(), Map.of("A=B", "x"))))
                .hasMessageContaining("'='");
        assertThatThrownBy(() -> TaskEnvironment.variables(context(List.of(), Map.of("", "x"))))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> TaskEnvironment.variables(context(List.of(), Map.of("A", "x\0y"))))
                .hasMessageContaining("NUL");
    }

    @Test
    void joinsGpuIdsAndRefusesNegativeOnes() {
        assertThat(TaskEnvironment.gpuList(List.of(2))).isEqualTo("2");
        assertThat(TaskEnvironment.gpuList(List.of(0, 1, 2, 3))).isEqualTo("0,1,2,3");
        assertThatThrownBy(() -> TaskEnvironment.gpuList(List.of(-1))).isInstanceOf(IllegalArgumentException.class);
    }
}
