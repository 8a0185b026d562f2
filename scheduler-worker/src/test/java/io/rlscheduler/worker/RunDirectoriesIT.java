package io.rlscheduler.worker;

import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class RunDirectoriesIT {

    @TempDir
    Path temp;

    @Test
    void createsTheRunAndCheckpointDirectoriesAndTheParameterFile() throws Exception {
        RunDirectories runs = new RunDirectories(temp.resolve("runs"));
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("lr", 0.1);
        params.put("episodes", 500);
        params.put("render", false);
        params.put("env", "FrozenLake-v1");

        RunDirectories.Attempt attempt = runs.prepare("task-1", 2, params);

        assertThat(attempt.getRunDir()).isEqualTo(temp.resolve("runs/task-1/attempt-2")).isDirectory();
        assertThat(attempt.getCheckpointDir()).isEqualTo(temp.resolve("runs/task-1/checkpoints")).isDirectory();
        assertThat(attempt.getParametersFile()).isEqualTo(attempt.getRunDir().resolve("params.json")).isRegularFile();
        assertThat(new ObjectMapper().readTree(attempt.getParametersFile().toFile()).toString())
                .isEqualTo("{\"lr\":0.1,\"episodes\":500,\"render\":false,\"env\":\"FrozenLake-v1\"}");
        try (var files = Files.list(attempt.getRunDir())) {
            assertThat(files).as("no temporary file left").containsExactly(attempt.getParametersFile());
        }
    }

    @Test
    void locateGivesTheSamePathsAsPrepareAndCreatesNothing() {
        RunDirectories runs = new RunDirectories(temp.resolve("runs"));
        RunDirectories.Attempt located = runs.locate("task-1", 3);
        assertThat(temp.resolve("runs")).doesNotExist();
        RunDirectories.Attempt prepared = runs.prepare("task-1", 3, Map.of());
        assertThat(located.getRunDir()).isEqualTo(prepared.getRunDir());
        assertThat(located.getCheckpointDir()).isEqualTo(prepared.getCheckpointDir());
        assertThat(located.getParametersFile()).isEqualTo(prepared.getParametersFile());
        assertThatThrownBy(() -> runs.locate("../escape", 1)).isInstanceOf(TaskLaunchException.class);
        assertThatThrownBy(() -> runs.locate("task-1", 0)).isInstanceOf(TaskLaunchException.class);
    }

    @Test
    void attemptsShareTheCheckpointDirectoryAndPreparingTwiceIsHarmless() {
        RunDirectories runs = new RunDirectories(temp);
        RunDirectories.Attempt first = runs.prepare("t", 1, Map.of("a", 1));
        Path checkpoint = first.getCheckpointDir().resolve("ckpt-100.json");
        RunDirectories.Attempt second = runs.prepare("t", 2, Map.of("a", 1));
        RunDirectories.Attempt again = runs.prepare("t", 2, Map.of("a", 2));

        assertThat(second.getCheckpointDir()).isEqualTo(first.getCheckpointDir());
        assertThat(second.getRunDir()).isNotEqualTo(first.getRunDir());
        assertThat(again.getRunDir()).isEqualTo(second.getRunDir());
        assertThat(checkpoint.getParent()).isDirectory();
    }

    @Test
    void preparingAnAttemptAgainReplacesItsParameterFileAndLeavesNoTemporaryFile() throws Exception {
        RunDirectories runs = new RunDirectories(temp);
        runs.prepare("t", 1, Map.of("a", 1));
        RunDirectories.Attempt again = runs.prepare("t", 1, Map.of("a", 2));

        assertThat(new ObjectMapper().readTree(again.getParametersFile().toFile()).toString()).isEqualTo("{\"a\":2}");
        try (var files = Files.list(again.getRunDir())) {
            assertThat(files).containsExactly(again.getParametersFile());
        }
    }

    @Test
    void theParameterFileIsTheOwnersOnlyWhetherWrittenFreshOrReplaced() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                FileSystems.getDefault().supportedFileAttributeViews().contains("posix"));
        RunDirectories runs = new RunDirectories(temp);
        Path fresh = runs.prepare("t", 1, Map.of("a", 1)).getParametersFile();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(fresh))).isEqualTo("rw-------");
        Path replaced = runs.prepare("t", 1, Map.of("a", 2)).getParametersFile();
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(replaced))).isEqualTo("rw-------");
    }

    @Test
    void aRootRemovedAfterItWasCreatedIsCreatedAgain() throws Exception {
        Path root = temp.resolve("runs");
        RunDirectories runs = new RunDirectories(root);
        runs.prepare("t", 1, Map.of());
        try (var walk = Files.walk(root)) {
            walk.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
        assertThat(root).doesNotExist();

        RunDirectories.Attempt attempt = runs.prepare("t", 2, Map.of("a", 1));

        assertThat(attempt.getParametersFile()).isRegularFile();
        assertThat(attempt.getCheckpointDir()).isDirectory();
    }

    @Test
    void refusesARunDirectoryThatIsASymbolicLink() throws Exception {
        Path root = Files.createDirectories(temp.resolve("root"));
        Path elsewhere = Files.createDirectories(temp.resolve("elsewhere"));
        Files.createDirectories(root.resolve("t"));
        Files.createSymbolicLink(root.resolve("t/attempt-1"), elsewhere);
        assertThatThrownBy(() -> new RunDirectories(root).prepare("t", 1, Map.of("a", 1)))
                .isInstanceOf(TaskLaunchException.class).hasMessageContaining("not a plain directory");
        try (var files = Files.list(elsewhere)) {
            assertThat(files).as("nothing written through the link").isEmpty();
        }
    }

    @Test
    void aParameterFileThatIsASymbolicLinkIsReplacedNotWrittenThrough() throws Exception {
        Path root = Files.createDirectories(temp.resolve("root"));
        Path target = Files.writeString(temp.resolve("elsewhere.json"), "untouched");
        Files.createDirectories(root.resolve("t/attempt-1"));
        Files.createSymbolicLink(root.resolve("t/attempt-1/params.json"), target);

        RunDirectories.Attempt attempt = new RunDirectories(root).prepare("t", 1, Map.of("a", 1));

        assertThat(Files.readString(target)).isEqualTo("untouched");
        assertThat(Files.isRegularFile(attempt.getParametersFile(), LinkOption.NOFOLLOW_LINKS)).isTrue();
        assertThat(Files.readString(attempt.getParametersFile())).contains("\"a\"");
    }

    @Test
    void refusesIdsAndAttemptsThatCouldEscapeOrMakeNoSense() {
        RunDirectories runs = new RunDirectories(temp);
        for (String bad : List.of("..", ".", "a/b", "../x", "", "-x", "a b")) {
            assertThatThrownBy(() -> runs.prepare(bad, 1, Map.of())).as("'%s'", bad)
                    .isInstanceOf(TaskLaunchException.class).hasMessageContaining("invalid task id");
        }
        assertThatThrownBy(() -> runs.prepare("t", 0, Map.of())).isInstanceOf(TaskLaunchException.class)
                .hasMessageContaining("attempt");
        assertThat(temp.resolve("x")).doesNotExist();
    }

    @Test
    void refusesATaskDirectoryThatIsASymbolicLinkOutOfTheRoot() throws Exception {
        Path root = Files.createDirectories(temp.resolve("root"));
        Path elsewhere = Files.createDirectories(temp.resolve("elsewhere"));
        Files.createSymbolicLink(root.resolve("evil"), elsewhere);
        assertThatThrownBy(() -> new RunDirectories(root).prepare("evil", 1, Map.of()))
                .isInstanceOf(TaskLaunchException.class).hasMessageContaining("outside the run root");
        assertThat(elsewhere.resolve("attempt-1")).as("nothing created through the link").doesNotExist();
    }

    @Test
    void refusesParametersThatAreNotJsonScalars() {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("bad", Double.NaN);
        assertThatThrownBy(() -> new RunDirectories(temp).prepare("t", 1, params))
                .isInstanceOf(TaskLaunchException.class).hasMessageContaining("finite");
    }
}
