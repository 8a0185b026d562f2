package io.rlscheduler.worker.internal;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class LauncherCommandTest {

    @Test
    void buildsTheLauncherCommandWithoutAShell() {
        List<String> cmd = LauncherCommand.build("python3", Path.of("/state/launcher.py"), Duration.ofSeconds(10),
                Path.of("/state/pgids/t1-4.pgid"), Path.of("/srv/scripts/train.py"), List.of("--lr", "0.1", "x y"));
        assertThat(cmd).containsExactly("python3", "-u", "/state/launcher.py", "--grace", "10",
                "--pgid-file", "/state/pgids/t1-4.pgid", "--",
                "python3", "-u", "/srv/scripts/train.py", "--lr", "0.1", "x y");
    }

    @Test
    void writesGraceAsPlainDecimalSeconds() {
        assertThat(LauncherCommand.seconds(Duration.ofSeconds(10))).isEqualTo("10");
        assertThat(LauncherCommand.seconds(Duration.ofMillis(1500))).isEqualTo("1.5");
        assertThat(LauncherCommand.seconds(Duration.ofMillis(1))).isEqualTo("0.001");
        assertThat(LauncherCommand.seconds(Duration.ZERO)).isEqualTo("0");
        assertThat(LauncherCommand.seconds(Duration.ofMinutes(2))).isEqualTo("120");
    }
}
