package io.rlscheduler.worker.internal.provenance;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/** Short child processes with real programs: answered, cut short, killed at the timeout, missing. */
class ShortCommandIT {

    @TempDir
    Path dir;

    @Test
    void aCommandThatExitsGivesItsLinesAndExitCode() {
        ShortCommand.Result r = ShortCommand.run(List.of("sh", "-c", "echo one; echo two >&2; exit 3"), dir, Map.of(),
                5_000, true, null);
        assertThat(r.outcome()).isEqualTo(ShortCommand.Outcome.EXITED);
        assertThat(r.exitCode()).isEqualTo(3);
        assertThat(r.lines()).containsExactlyInAnyOrder("one", "two");
        assertThat(r.succeeded()).isFalse();
    }

    @Test
    void theEnvironmentIsSetAndVariablesMappedToNullAreRemoved() {
        ShortCommand.Result r = ShortCommand.run(List.of("sh", "-c", "echo \"$A-${HOME:-none}\""), dir,
                Map.of("A", "set"), 5_000, false, null);
        assertThat(r.lines()).containsExactly("set-" + System.getenv("HOME"));
        java.util.Map<String, String> unset = new java.util.HashMap<>();
        unset.put("HOME", null);
        assertThat(ShortCommand.run(List.of("sh", "-c", "echo \"${HOME:-none}\""), dir, unset, 5_000, false, null).lines())
                .containsExactly("none");
    }

    @Test
    void readingStopsAtTheLineAskedForAndTheRestIsNotWaitedFor() {
        long started = System.nanoTime();
        ShortCommand.Result r = ShortCommand.run(List.of("sh", "-c", "echo head; echo change; exec sleep 30"), dir,
                Map.of(), 20_000, false, line -> line.equals("change"));
        assertThat(r.outcome()).isEqualTo(ShortCommand.Outcome.STOPPED_AT_LINE);
        assertThat(r.lines()).containsExactly("head", "change");
        assertThat(System.nanoTime() - started).as("not the 20 s timeout").isLessThan(10_000_000_000L);
    }

    @Test
    void aCommandStillRunningAtTheTimeoutIsKilled() {
        ShortCommand.Result r = ShortCommand.run(List.of("sh", "-c", "echo started; exec sleep 30"), dir, Map.of(), 300,
                false, null);
        assertThat(r.outcome()).isEqualTo(ShortCommand.Outcome.TIMED_OUT);
        assertThat(r.lines()).containsExactly("started");
    }

    @Test
    void aProgramThatDoesNotExistIsMissing() {
        ShortCommand.Result r = ShortCommand.run(List.of(dir.resolve("no-such-program").toString()), dir, Map.of(), 1_000,
                false, null);
        assertThat(r.outcome()).isEqualTo(ShortCommand.Outcome.MISSING);
    }
}
