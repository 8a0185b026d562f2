package io.rlscheduler.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class JvmProcessIT {

    /** A child JVM starts in well under a second when idle; leave room for a loaded machine. */
    private static final Duration START = Duration.ofSeconds(60);

    @Test
    void passesArgsEnvAndWorkingDirectoryAndCapturesStdoutAndStderr(@TempDir Path dir)
            throws IOException {
        Path logFile = dir.resolve("fixture.log");
        try (JvmProcess jvm = JvmProcess.builder(JvmFixture.class)
                .args("ready", "a b", "c")
                .env("FIXTURE_ENV", "from-the-test")
                .workingDirectory(dir)
                .logFile(logFile)
                .start()) {
            assertThat(jvm.awaitOutput("ready"::equals, START)).isEqualTo("ready");

            assertThat(jvm.isAlive()).isTrue();
            assertThat(jvm.exitCode()).isEmpty();
            assertThat(jvm.logFile()).isEqualTo(logFile);
            assertThat(jvm.output()).containsSubsequence(
                    "args [ready, a b, c]",
                    "env from-the-test",
                    "cwd " + dir.toRealPath(),
                    "ready");
            assertThat(jvm.output()).contains("stderr line");
            assertThat(Files.readAllLines(logFile)).contains("ready", "stderr line");
        }
    }

    @Test
    void killIsSigkillAndLeavesNoProcess() {
        try (JvmProcess jvm = JvmProcess.start(JvmFixture.class, "ready")) {
            jvm.awaitOutput("ready"::equals, START);
            long pid = jvm.pid();

            jvm.kill();

            assertThat(jvm.isAlive()).isFalse();
            assertThat(jvm.exitCode()).hasValue(137);
            assertThat(ProcessTree.isAlive(pid)).isFalse();
            assertThat(jvm.output()).as("no shutdown hook runs on SIGKILL")
                    .doesNotContain("shutdown hook ran");
            jvm.kill(); // already dead: nothing to do
        }
    }

    @Test
    void terminateIsSigtermAndRunsShutdownHooks() {
        try (JvmProcess jvm = JvmProcess.start(JvmFixture.class, "ready")) {
            jvm.awaitOutput("ready"::equals, START);

            assertThat(jvm.terminate(Duration.ofSeconds(30))).isTrue();

            assertThat(jvm.exitCode()).hasValue(143);
            assertThat(jvm.output()).contains("shutdown hook ran");
        }
    }

    @Test
    void freezeStopsTheJvmAndThawResumesIt() {
        try (JvmProcess jvm = JvmProcess.start(JvmFixture.class, "tick")) {
            jvm.awaitOutput("tick 5", START);

            jvm.freeze();

            assertThat(jvm.isFrozen()).isTrue();
            assertThat(jvm.isAlive()).isTrue();
            assertThat(ProcessTree.state(jvm.pid())).contains('T');
            assertThat(ProcessTree.isAlive(jvm.pid())).as("stopped is not dead").isTrue();
            long frozenAt = lastTick(jvm);
            // It printed a line every 10 ms before; 300 ms without one shows it stands still.
            await().during(Duration.ofMillis(300)).atMost(Duration.ofSeconds(5))
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> lastTick(jvm), tick -> tick == frozenAt);

            jvm.thaw();

            assertThat(jvm.isFrozen()).isFalse();
            assertThat(ProcessTree.state(jvm.pid())).isNotEqualTo(Optional.of('T'));
            await().atMost(Duration.ofSeconds(30)).until(() -> lastTick(jvm), tick -> tick > frozenAt + 5);
        }
    }

    @Test
    void terminateReachesAFrozenJvm() {
        try (JvmProcess jvm = JvmProcess.start(JvmFixture.class, "ready")) {
            jvm.awaitOutput("ready"::equals, START);
            jvm.freeze();

            assertThat(jvm.terminate(Duration.ofSeconds(30))).isTrue();

            assertThat(jvm.exitCode()).hasValue(143);
            assertThat(jvm.output()).contains("shutdown hook ran");
        }
    }

    @Test
    void killReachesAFrozenJvm() {
        try (JvmProcess jvm = JvmProcess.start(JvmFixture.class, "tick")) {
            jvm.awaitOutput("tick 1", START);
            jvm.freeze();

            jvm.kill();

            assertThat(jvm.exitCode()).hasValue(137);
            assertThat(jvm.isFrozen()).isFalse();
            jvm.thaw(); // of a dead JVM: nothing to do
            assertThatThrownBy(jvm::freeze).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void descendantsFindsTheSpawnedChildThatOutlivesAKillAndDiesOnClose() {
        long child;
        try (JvmProcess jvm = JvmProcess.start(JvmFixture.class, "spawn")) {
            child = Long.parseLong(jvm.awaitOutput("child ", START).substring("child ".length()));
            jvm.awaitOutput("ready"::equals, START);

            assertThat(ProcessTree.descendants(jvm.pid())).contains(child);
            assertThat(jvm.descendants()).contains(child);
            assertThat(ProcessTree.descendants(ProcessHandle.current().pid()))
                    .as("this JVM's descendants: the child JVM, then its child")
                    .containsSubsequence(jvm.pid(), child);

            jvm.kill();

            assertThat(jvm.exitCode()).hasValue(137);
            assertThat(ProcessTree.isAlive(child)).as("a crash leaves the child running").isTrue();
            assertThat(ProcessTree.descendants(jvm.pid())).isEmpty();
        }
        assertThat(ProcessTree.isAlive(child)).as("close() kills the orphan too").isFalse();
    }

    @Test
    void closeKillsTheJvmAndItsChildrenAndIsIdempotent() {
        JvmProcess jvm = JvmProcess.start(JvmFixture.class, "spawn");
        long child = Long.parseLong(jvm.awaitOutput("child ", START).substring("child ".length()));

        jvm.close();
        jvm.close();

        assertThat(jvm.isAlive()).isFalse();
        assertThat(jvm.exitCode()).hasValue(137);
        assertThat(ProcessTree.isAlive(child)).isFalse();
    }

    @Test
    void awaitOutputFailsAtOnceWhenTheJvmExitsWithoutTheLine() {
        try (JvmProcess jvm = JvmProcess.start(JvmFixture.class, "exit", "3")) {
            long began = System.nanoTime();

            assertThatThrownBy(() -> jvm.awaitOutput("never printed", START))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("exited with 3")
                    .hasMessageContaining("bye");

            assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(START);
            assertThat(jvm.exitCode()).hasValue(3);
            assertThat(jvm.output()).as("the last line counts once the JVM exits")
                    .containsExactly("bye", "no newline");
        }
    }

    @Test
    void awaitOutputTimesOut() {
        try (JvmProcess jvm = JvmProcess.start(JvmFixture.class, "ready")) {
            jvm.awaitOutput("ready"::equals, START);
            long began = System.nanoTime();

            assertThatThrownBy(() -> jvm.awaitOutput("never printed", Duration.ofMillis(200)))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("within PT0.2S")
                    .hasMessageContaining("ready");

            assertThat(Duration.ofNanos(System.nanoTime() - began)).isLessThan(Duration.ofSeconds(5));
            assertThat(jvm.awaitOutput(line -> line.startsWith("env "), Duration.ZERO))
                    .isEqualTo("env null");
        }
    }

    @Test
    void zombiesAreNotAliveAndNotDescendants() throws Exception {
        // sh forks "sleep 0" and then becomes "sleep 300", which never waits for that child.
        Process parent = new ProcessBuilder("sh", "-c", "sleep 0 & exec sleep 300").start();
        try {
            long zombie = await().atMost(Duration.ofSeconds(30))
                    .until(() -> zombieChildOf(parent.pid()), Optional::isPresent).orElseThrow();

            assertThat(ProcessTree.state(zombie)).contains('Z');
            assertThat(ProcessTree.isAlive(zombie)).isFalse();
            assertThat(ProcessTree.descendants(parent.pid())).doesNotContain(zombie);
            assertThat(ProcessTree.isAlive(parent.pid())).isTrue();
        } finally {
            parent.destroyForcibly();
            parent.waitFor(10, TimeUnit.SECONDS);
        }
        assertThat(ProcessTree.isAlive(parent.pid())).isFalse();
        assertThat(ProcessTree.isAlive(Long.MAX_VALUE)).isFalse();
        assertThat(ProcessTree.descendants(Long.MAX_VALUE)).isEmpty();
    }

    private static Optional<Long> zombieChildOf(long parent) throws IOException {
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path dir : dirs) {
                Optional<ProcessTree.Stat> stat =
                        ProcessTree.stat(Long.parseLong(dir.getFileName().toString()));
                if (stat.isPresent() && stat.get().ppid() == parent && stat.get().state() == 'Z') {
                    return Optional.of(stat.get().pid());
                }
            }
        }
        return Optional.empty();
    }

    /** The number of the last complete "tick n" line. */
    private static long lastTick(JvmProcess jvm) {
        List<String> lines = jvm.output();
        for (int i = lines.size() - 1; i >= 0; i--) {
            if (lines.get(i).startsWith("tick ")) {
                return Long.parseLong(lines.get(i).substring("tick ".length()));
            }
        }
        return -1;
    }
}
