package io.rlscheduler.worker;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class PythonTaskExecutorBuilderTest {

    @Test
    void appliesDefaults() {
        PythonTaskExecutor executor = PythonTaskExecutor.builder().scriptRoot(Path.of("/srv/scripts"))
                .stateDirectory(Path.of("/var/lib/rls")).build();
        assertThat(executor.getPython()).isEqualTo("python3");
        assertThat(executor.getGracePeriod()).isEqualTo(Duration.ofSeconds(10));
        assertThat(executor.getScriptRoots()).containsExactly(Path.of("/srv/scripts"));
        assertThat(executor.getStateDirectory()).isEqualTo(Path.of("/var/lib/rls"));
    }

    @Test
    void makesPathsAbsolute() {
        PythonTaskExecutor executor = PythonTaskExecutor.builder().scriptRoots(List.of(Path.of("scripts")))
                .stateDirectory(Path.of("state/./x/..")).build();
        assertThat(executor.getScriptRoots()).containsExactly(Path.of("scripts").toAbsolutePath());
        assertThat(executor.getStateDirectory()).isEqualTo(Path.of("state").toAbsolutePath());
    }

    @Test
    void requiresARootAndAStateDirectory() {
        assertThatThrownBy(() -> PythonTaskExecutor.builder().stateDirectory(Path.of("/s")).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("script root");
        assertThatThrownBy(() -> PythonTaskExecutor.builder().scriptRoots(List.of()).stateDirectory(Path.of("/s")).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("script root");
        assertThatThrownBy(() -> PythonTaskExecutor.builder().scriptRoot(Path.of("/r")).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("state directory");
    }

    @Test
    void validatesSettersAtOnce() {
        assertThatThrownBy(() -> PythonTaskExecutor.builder().gracePeriod(Duration.ofMillis(-1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("between 0 and");
        assertThatThrownBy(() -> PythonTaskExecutor.builder().gracePeriod(Duration.ofMinutes(61)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(PythonTaskExecutor.builder().gracePeriod(Duration.ofHours(1))).isNotNull();
        assertThatThrownBy(() -> PythonTaskExecutor.builder().pythonExecutable(" "))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> PythonTaskExecutor.builder().gracePeriod(null)).isInstanceOf(NullPointerException.class);
        assertThat(PythonTaskExecutor.builder().gracePeriod(Duration.ZERO)).isNotNull();
    }
}
