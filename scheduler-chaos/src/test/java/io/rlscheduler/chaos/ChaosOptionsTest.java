package io.rlscheduler.chaos;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The command line of the chaos run: its options, their defaults and what it rejects. */
class ChaosOptionsTest {

    @Test
    void readsEveryOption() {
        ChaosOptions o = ChaosOptions.parse(new String[] {"--seed", "42", "--tasks", "12", "--duration-s", "30",
                "--budget-s", "85", "--workdir", "/tmp/w", "--scripts", "s"});

        assertThat(o.getSeed()).isEqualTo(42);
        assertThat(o.getTasks()).isEqualTo(12);
        assertThat(o.getDuration()).isEqualTo(Duration.ofSeconds(30));
        assertThat(o.getBudget()).isEqualTo(Duration.ofSeconds(85));
        assertThat(o.getWorkdir()).contains(Path.of("/tmp/w"));
        assertThat(o.getScripts()).isEqualTo(Path.of("s"));
    }

    @Test
    void hasItsDefaults() {
        ChaosOptions o = ChaosOptions.parse(new String[0]);

        assertThat(o.getSeed()).isBetween(1L, 999_999L);
        assertThat(o.getTasks()).isEqualTo(40);
        assertThat(o.getDuration()).isEqualTo(Duration.ofSeconds(120));
        assertThat(o.getBudget()).isEqualTo(Duration.ofSeconds(270));
        assertThat(o.getWorkdir()).isEmpty();
        assertThat(o.getScripts()).isEqualTo(Path.of("scripts"));
    }

    @Test
    void rejectsBadCommandLines() {
        assertThatThrownBy(() -> ChaosOptions.parse(new String[] {"--seed"}))
                .hasMessage("missing value for --seed");
        assertThatThrownBy(() -> ChaosOptions.parse(new String[] {"--speed", "1"}))
                .hasMessage("unknown option --speed");
        assertThatThrownBy(() -> ChaosOptions.parse(new String[] {"--tasks", "0"}))
                .hasMessage("--tasks must be at least 1");
        assertThatThrownBy(() -> ChaosOptions.parse(new String[] {"--duration-s", "4"}))
                .hasMessage("--duration-s must be at least 5");
        assertThatThrownBy(() -> ChaosOptions.parse(new String[] {"--duration-s", "60", "--budget-s", "89"}))
                .hasMessage("--budget-s must be at least --duration-s + 30");
        assertThatThrownBy(() -> ChaosOptions.parse(new String[] {"--tasks", "many"}))
                .isInstanceOf(NumberFormatException.class);
    }

    @Test
    void helpIsAskedForWhereAnOptionGoes() {
        assertThat(ChaosOptions.asksForHelp(new String[] {"--help"})).isTrue();
        assertThat(ChaosOptions.asksForHelp(new String[] {"--seed", "1", "-h"})).isTrue();
        assertThat(ChaosOptions.asksForHelp(new String[] {"--workdir", "-h"})).isFalse();
    }
}
