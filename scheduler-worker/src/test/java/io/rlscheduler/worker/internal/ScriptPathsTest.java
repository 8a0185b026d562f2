package io.rlscheduler.worker.internal;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class ScriptPathsTest {

    @Test
    void acceptsAndNormalisesRelativePaths() {
        assertThat(ScriptPaths.checkRelative("train.py")).isEqualTo(Path.of("train.py"));
        assertThat(ScriptPaths.checkRelative("./rl/./train.py")).isEqualTo(Path.of("rl/train.py"));
        assertThat(ScriptPaths.checkRelative("rl//train.py")).isEqualTo(Path.of("rl/train.py"));
        assertThat(ScriptPaths.checkRelative("..hidden/x..py")).isEqualTo(Path.of("..hidden/x..py"));
    }

    @Test
    void refusesAbsolutePaths() {
        assertThatThrownBy(() -> ScriptPaths.checkRelative("/etc/passwd")).hasMessageContaining("absolute");
        assertThatThrownBy(() -> ScriptPaths.checkRelative("//x.py")).hasMessageContaining("absolute");
    }

    @Test
    void refusesParentSegments() {
        for (String bad : new String[] {"..", "../x.py", "a/../b.py", "a/..", "a/../../x.py"}) {
            assertThatThrownBy(() -> ScriptPaths.checkRelative(bad)).as(bad).hasMessageContaining("'..'");
        }
    }

    @Test
    void refusesEmptyNulAndDotOnly() {
        assertThatThrownBy(() -> ScriptPaths.checkRelative("")).hasMessageContaining("empty");
        assertThatThrownBy(() -> ScriptPaths.checkRelative(null)).hasMessageContaining("empty");
        assertThatThrownBy(() -> ScriptPaths.checkRelative("a\0.py")).hasMessageContaining("NUL");
        assertThatThrownBy(() -> ScriptPaths.checkRelative(".")).hasMessageContaining("no file");
        assertThatThrownBy(() -> ScriptPaths.checkRelative("./")).hasMessageContaining("no file");
    }

    @Test
    void insideMeansStrictlyBelowTheRoot() {
        Path root = Path.of("/srv/scripts");
        assertThat(ScriptPaths.isInside(root, Path.of("/srv/scripts/a.py"))).isTrue();
        assertThat(ScriptPaths.isInside(root, Path.of("/srv/scripts/sub/a.py"))).isTrue();
        assertThat(ScriptPaths.isInside(root, root)).isFalse();
        assertThat(ScriptPaths.isInside(root, Path.of("/srv/scripts-evil/a.py"))).isFalse();
        assertThat(ScriptPaths.isInside(root, Path.of("/srv/a.py"))).isFalse();
    }
}
