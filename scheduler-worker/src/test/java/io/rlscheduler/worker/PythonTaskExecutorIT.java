package io.rlscheduler.worker;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rlscheduler.worker.internal.LauncherFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** Runs real python3 processes under the real launcher. */
class PythonTaskExecutorIT {

    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<List<String>> STRINGS = new TypeReference<>() { };
    private static final TypeReference<Map<String, String>> STRING_MAP = new TypeReference<>() { };

    @TempDir
    Path temp;

    private ExecutorFixture fixture;
    private PythonTaskExecutor executor;
    private final List<TaskExecution> started = new ArrayList<>();
    private final List<ProcessHandle> strays = new ArrayList<>();

    @BeforeEach
    void setUp() {
        fixture = new ExecutorFixture(temp);
        executor = fixture.executor(Duration.ofSeconds(2));
    }

    @AfterEach
    void tearDown() throws Exception {
        for (TaskExecution e : started) {
            e.stop(StopReason.SHUTDOWN, Duration.ZERO);
            e.completion().get(WAIT.toSeconds(), TimeUnit.SECONDS);
        }
        strays.forEach(ProcessHandle::destroyForcibly); // each handle knows its start time: no recycled pid is hit
    }

    private TaskExecution start(TaskContext context, TaskOutput output) {
        TaskExecution execution = executor.start(context, output);
        started.add(execution);
        return execution;
    }

    private static ExecutionResult resultOf(TaskExecution execution) throws Exception {
        return execution.completion().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    /** Whether a process has exited: no /proc entry, or a zombie waiting for its reaper. */
    static boolean gone(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"));
            char state = stat.substring(stat.lastIndexOf(')') + 2).charAt(0);
            return state == 'Z' || state == 'X';
        } catch (IOException e) {
            return true;
        }
    }

    private static List<Long> pids(String text) {
        return Arrays.stream(text.trim().split(" ")).map(Long::parseLong).collect(Collectors.toList());
    }

    @Test
    void outputLinesArriveInOrderPerStreamWithTheirTags() throws Exception {
        RecordingOutput output = new RecordingOutput();
        ExecutionResult result = resultOf(start(fixture.context("echo", "echo_lines.py"), output));

        assertThat(result.getExitCode()).isZero();
        assertThat(result.getStopReason()).isEqualTo(StopReason.NONE);
        assertThat(result.getError()).isEmpty();
        String x = "x".repeat(70000);
        assertThat(output.stdout()).containsExactly(
                "out 1",
                "out 2 \u00e9\u4e2d",
                "crlf line",
                "bad \uFFFD\uFFFD byte",
                "",
                x.substring(0, 65536),
                x.substring(65536),
                "tail without newline");
        assertThat(output.stderr()).containsExactly("err 1", "err 2");
    }

    @Test
    void exitCodeZeroIsReported() throws Exception {
        ExecutionResult result = resultOf(start(fixture.context("exit0", "exit_code.py"), new RecordingOutput()));
        assertThat(result.getExitCode()).isZero();
        assertThat(result.getStopReason()).isEqualTo(StopReason.NONE);
    }

    @Test
    void exitCodeThreeIsReported() throws Exception {
        RecordingOutput output = new RecordingOutput();
        TaskContext context = fixture.context("exit3", "exit_code.py", Map.of("code", 3), List.of(), List.of(), Map.of());
        ExecutionResult result = resultOf(start(context, output));
        assertThat(result.getExitCode()).isEqualTo(3);
        assertThat(result.getStopReason()).isEqualTo(StopReason.NONE);
        assertThat(output.stdout()).containsExactly("exiting");
    }

    @Test
    void deathBySignalIsReportedAs128PlusTheSignal() throws Exception {
        TaskContext context = fixture.context("killed", "exit_code.py", Map.of("signal", "KILL"), List.of(), List.of(),
                Map.of());
        ExecutionResult result = resultOf(start(context, new RecordingOutput()));
        assertThat(result.getExitCode()).isEqualTo(128 + 9);
        assertThat(result.getStopReason()).isEqualTo(StopReason.NONE);
    }

    @Test
    void scriptSeesItsGpusParametersRunDirectoriesAndEnvironment() throws Exception {
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("lr", 0.1);
        params.put("steps", 500);
        params.put("verbose", true);
        params.put("name", "run a");
        TaskContext context = fixture.context("env.1", "show_env.py", params, List.of("--extra", "x y"),
                List.of(0, 3), Map.of("MY_VAR", "v"));
        RecordingOutput output = new RecordingOutput();
        ExecutionResult result = resultOf(start(context, output));
        assertThat(result.getExitCode()).as("stderr: %s", output.stderr()).isZero();

        JsonNode report = JSON.readTree(output.stdoutAfter("REPORT ").orElseThrow());
        assertThat(JSON.convertValue(report.get("argv"), STRINGS)).containsExactly(
                "--lr", "0.1", "--steps", "500", "--verbose", "true", "--name", "run a", "--extra", "x y");
        Map<String, String> expectedEnv = new LinkedHashMap<>();
        expectedEnv.put("CUDA_VISIBLE_DEVICES", "0,3");
        expectedEnv.put("CUDA_DEVICE_ORDER", "PCI_BUS_ID");
        expectedEnv.put("PYTHONUNBUFFERED", "1");
        expectedEnv.put("RLS_TASK_ID", "env.1");
        expectedEnv.put("RLS_ATTEMPT", "1");
        expectedEnv.put("RLS_EPOCH", "7");
        expectedEnv.put("RLS_TRACE_ID", "trace-env.1");
        expectedEnv.put("RLS_RUN_DIR", context.getRunDir().toString());
        expectedEnv.put("RLS_CHECKPOINT_DIR", context.getCheckpointDir().toString());
        expectedEnv.put("RLS_PARAMS_FILE", context.getParametersFile().toString());
        expectedEnv.put("MY_VAR", "v");
        assertThat(JSON.convertValue(report.get("env"), STRING_MAP)).isEqualTo(expectedEnv);
        assertThat(Path.of(report.get("cwd").asText())).isEqualTo(context.getRunDir().toRealPath());
        assertThat(report.get("params").toString()).isEqualTo("{\"lr\":0.1,\"steps\":500,\"verbose\":true,\"name\":\"run a\"}");
        assertThat(report.get("stdin").asText()).as("stdin is /dev/null").isEmpty();
        assertThat(report.get("pgid_is_parent").asBoolean()).as("the launcher leads the script's group").isTrue();
    }

    @Test
    void noGpusMeansAnEmptyCudaVisibleDevices() throws Exception {
        TaskContext context = fixture.context("nogpu", "show_env.py", Map.of(), List.of(), List.of(), Map.of());
        RecordingOutput output = new RecordingOutput();
        assertThat(resultOf(start(context, output)).getExitCode()).isZero();
        JsonNode env = JSON.readTree(output.stdoutAfter("REPORT ").orElseThrow()).get("env");
        assertThat(env.has("CUDA_VISIBLE_DEVICES")).isTrue();
        assertThat(env.get("CUDA_VISIBLE_DEVICES").asText()).isEmpty();
    }

    @Test
    void environmentSettingAReservedKeyIsRefusedWithoutSpawning() {
        Set<Long> before = ExecutorFixture.children();
        for (String key : List.of("CUDA_VISIBLE_DEVICES", "RLS_TASK_ID", "RLS_ANYTHING", "CUDA_DEVICE_ORDER")) {
            TaskContext context = fixture.context("reserved", "show_env.py", Map.of(), List.of(), List.of(0),
                    Map.of(key, "1"));
            assertThatThrownBy(() -> executor.start(context, new RecordingOutput()))
                    .isInstanceOf(TaskLaunchException.class)
                    .hasMessageContaining("reserved")
                    .hasMessageContaining(key);
        }
        assertThat(ExecutorFixture.children()).isSubsetOf(before);
    }

    @Test
    void stopKillsTheScriptAndEveryProcessItStarted() throws Exception {
        RecordingOutput output = new RecordingOutput();
        TaskExecution execution = start(fixture.context("tree", "spawn_tree.py"), output);
        await().atMost(WAIT).until(() -> output.stdoutAfter("PIDS ").isPresent());
        List<Long> pids = pids(output.stdoutAfter("PIDS ").orElseThrow());
        assertThat(pids).hasSize(4).noneMatch(PythonTaskExecutorIT::gone);

        execution.stop(StopReason.CANCELLED, Duration.ofSeconds(5));
        ExecutionResult result = resultOf(execution);

        assertThat(result.getStopReason()).isEqualTo(StopReason.CANCELLED);
        assertThat(result.getExitCode()).isEqualTo(128 + 15); // python's default SIGTERM action
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(pids).allMatch(PythonTaskExecutorIT::gone));
    }

    @Test
    void outputWrittenWhileStoppingIsKept() throws Exception {
        RecordingOutput output = new RecordingOutput();
        TaskExecution execution = start(fixture.context("farewell", "term_handler.py"), output);
        await().atMost(WAIT).until(() -> output.stdout().contains("ready"));

        execution.stop(StopReason.CANCELLED, Duration.ofSeconds(5));
        ExecutionResult result = resultOf(execution);

        assertThat(result.getExitCode()).isZero();
        assertThat(result.getStopReason()).isEqualTo(StopReason.CANCELLED);
        assertThat(output.stdout()).containsExactly("ready", "saving checkpoint");
        assertThat(output.stderr()).containsExactly("terminating");
    }

    @Test
    void scriptIgnoringTermIsKilledAfterTheGracePeriod() throws Exception {
        executor = fixture.executor(Duration.ofSeconds(1));
        RecordingOutput output = new RecordingOutput();
        TaskExecution execution = start(fixture.context("stubborn", "ignore_term.py"), output);
        await().atMost(WAIT).until(() -> output.stdout().contains("ready"));

        long t0 = System.nanoTime();
        execution.stop(StopReason.TIMED_OUT, Duration.ofSeconds(1));
        ExecutionResult result = resultOf(execution);
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);

        assertThat(result.getExitCode()).as("output %s", output.all()).isEqualTo(128 + 9);
        assertThat(result.getStopReason()).isEqualTo(StopReason.TIMED_OUT);
        assertThat(result.getError()).as("the launcher escalated by itself").isEmpty();
        assertThat(elapsedMillis).as("KILL waited for the grace period").isGreaterThanOrEqualTo(900);
    }

    @Test
    void aStopGraceShorterThanTheLaunchersIsHonoured() throws Exception {
        executor = fixture.executor(Duration.ofSeconds(60));
        RecordingOutput output = new RecordingOutput();
        TaskExecution execution = start(fixture.context("hurry", "ignore_term.py"), output);
        await().atMost(WAIT).until(() -> output.stdout().contains("ready"));

        execution.stop(StopReason.FENCED, Duration.ofMillis(300));
        ExecutionResult result = resultOf(execution); // bounded by WAIT, far below the launcher's 60 s

        assertThat(result.getExitCode()).isEqualTo(128 + 9);
        assertThat(result.getStopReason()).isEqualTo(StopReason.FENCED);
    }

    @Test
    void stopIsIdempotentAndTheFirstReasonWins() throws Exception {
        RecordingOutput output = new RecordingOutput();
        TaskExecution execution = start(fixture.context("twice", "spawn_tree.py"), output);
        await().atMost(WAIT).until(() -> output.stdoutAfter("PIDS ").isPresent());

        execution.stop(StopReason.CANCELLED, Duration.ofSeconds(5));
        execution.stop(StopReason.TIMED_OUT, Duration.ZERO);
        execution.stop(StopReason.SHUTDOWN, Duration.ZERO);

        assertThat(resultOf(execution).getStopReason()).isEqualTo(StopReason.CANCELLED);
    }

    @Test
    void stopAfterTheEndChangesNothing() throws Exception {
        TaskExecution execution = start(fixture.context("done", "exit_code.py"), new RecordingOutput());
        ExecutionResult before = resultOf(execution);
        execution.stop(StopReason.CANCELLED, Duration.ZERO);
        ExecutionResult after = resultOf(execution);
        assertThat(after.getStopReason()).isEqualTo(StopReason.NONE);
        assertThat(after.getExitCode()).isEqualTo(before.getExitCode());
    }

    @Test
    void stopRejectsNoneAndNegativeGrace() {
        TaskExecution execution = start(fixture.context("args", "ignore_term.py"), new RecordingOutput());
        assertThatThrownBy(() -> execution.stop(StopReason.NONE, Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> execution.stop(StopReason.CANCELLED, Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void completionIsBoundedWhenAProcessThatLeftTheSessionHoldsTheOutput() throws Exception {
        RecordingOutput output = new RecordingOutput();
        TaskExecution execution = start(fixture.context("escape", "escape_session.py"), output);
        await().atMost(WAIT).until(() -> output.stdoutAfter("ESCAPEE ").isPresent());
        long escapee = Long.parseLong(output.stdoutAfter("ESCAPEE ").orElseThrow());
        ProcessHandle.of(escapee).ifPresent(strays::add); // out of the launcher's reach: the test kills it

        ExecutionResult result = resultOf(execution);

        assertThat(result.getExitCode()).isZero();
        assertThat(result.getError()).contains("output streams were still open");
    }

    @Test
    void completionComesAfterTheLastLine() throws Exception {
        RecordingOutput output = new RecordingOutput();
        TaskContext context = fixture.context("many", "many_lines.py", Map.of("count", 20000), List.of(), List.of(),
                Map.of());
        // Sampled in the completing thread, so no line may arrive after this snapshot.
        CompletableFuture<List<String>> atCompletion = start(context, output).completion().thenApply(r -> output.stdout());
        List<String> lines = atCompletion.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertThat(lines).hasSize(20001);
        assertThat(lines.get(19999)).isEqualTo("line 19999");
        assertThat(lines.get(20000)).isEqualTo("last");
    }

    @Test
    void scriptsOutsideTheRootsAreRefusedWithoutSpawning() throws Exception {
        Path root = Files.createDirectories(temp.resolve("root"));
        Path outside = Files.writeString(temp.resolve("outside.py"), "print('escaped')\n");
        Files.createSymbolicLink(root.resolve("link.py"), outside);
        Files.createDirectories(root.resolve("adir"));
        Files.writeString(root.resolve("ok.py"), "print('ok')\n");
        executor = PythonTaskExecutor.builder().scriptRoot(root).stateDirectory(fixture.stateDir).build();
        Set<Long> before = ExecutorFixture.children();

        for (String script : List.of("../outside.py", "sub/../../outside.py", outside.toString(),
                root.resolve("ok.py").toString(), "link.py", "missing.py", "adir", "", ".")) {
            TaskContext context = fixture.context("escape", script);
            assertThatThrownBy(() -> executor.start(context, new RecordingOutput()))
                    .as("script '%s'", script)
                    .isInstanceOf(TaskLaunchException.class)
                    .hasMessageContaining("task escape")
                    .hasMessageContaining("script '" + script + "'");
        }
        assertThat(ExecutorFixture.children()).isSubsetOf(before);
        assertThat(fixture.stateDir.resolve(PythonTaskExecutor.PGID_DIRECTORY)).doesNotExist();

        RecordingOutput output = new RecordingOutput();
        assertThat(resultOf(start(fixture.context("inside", "ok.py"), output)).getExitCode()).isZero();
        assertThat(output.stdout()).containsExactly("ok");
    }

    @Test
    void scriptsInSubdirectoriesAndOfLaterRootsAreFound() throws Exception {
        Path empty = Files.createDirectories(temp.resolve("empty-root"));
        executor = PythonTaskExecutor.builder().scriptRoot(empty).scriptRoot(fixture.scriptRoot)
                .stateDirectory(fixture.stateDir).build();
        RecordingOutput output = new RecordingOutput();
        assertThat(resultOf(start(fixture.context("nested", "./nested/hello.py"), output)).getExitCode()).isZero();
        assertThat(output.stdout()).containsExactly("hello from nested");
    }

    @Test
    void aMissingPythonIsALaunchFailure() {
        executor = PythonTaskExecutor.builder().pythonExecutable(temp.resolve("no-such-python").toString())
                .scriptRoot(fixture.scriptRoot).stateDirectory(fixture.stateDir).build();
        assertThatThrownBy(() -> executor.start(fixture.context("nopython", "exit_code.py"), new RecordingOutput()))
                .isInstanceOf(TaskLaunchException.class)
                .hasMessageContaining("task nopython")
                .hasMessageContaining("no-such-python");
    }

    @Test
    void killLeftoversKillsTheGroupOfALauncherNoOneTracks() throws Exception {
        Process launcher = startLauncherDirectly("orphan-3.pgid", "spawn_tree.py");
        List<Long> pids = readPids(launcher);
        Path pgidFile = fixture.stateDir.resolve("pgids/orphan-3.pgid");
        await().atMost(WAIT).until(() -> Files.exists(pgidFile));
        assertThat(Files.readString(pgidFile).trim()).isEqualTo(Long.toString(launcher.pid()));

        int killed = fixture.executor(Duration.ofSeconds(2)).killLeftovers();

        assertThat(killed).isEqualTo(1);
        assertThat(pgidFile).doesNotExist();
        assertThat(launcher.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(launcher.exitValue()).isEqualTo(128 + 9);
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(pids).allMatch(PythonTaskExecutorIT::gone));
    }

    @Test
    void killLeftoversKillsTheTasksProcessesWhenTheLauncherDiedAlone() throws Exception {
        Process launcher = startLauncherDirectly("headless-5.pgid", "spawn_tree.py");
        List<Long> pids = readPids(launcher);
        Path pgidFile = fixture.stateDir.resolve("pgids/headless-5.pgid");
        await().atMost(WAIT).until(() -> Files.exists(pgidFile));
        launcher.toHandle().destroyForcibly(); // the launcher dies, its group lives on without a leader
        assertThat(launcher.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        assertThat(pids).noneMatch(PythonTaskExecutorIT::gone);

        assertThat(fixture.executor(Duration.ofSeconds(2)).killLeftovers()).isEqualTo(1);

        assertThat(pgidFile).doesNotExist();
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(pids).allMatch(PythonTaskExecutorIT::gone));
    }

    @Test
    void killLeftoversSparesAProcessThatIsNotOurLauncher() throws Exception {
        Process stranger = new ProcessBuilder("python3", "-u",
                fixture.scriptRoot.resolve("setsid_sleeper.py").toString()).redirectErrorStream(true).start();
        strays.add(stranger.toHandle());
        String first = new String(stranger.getInputStream().readNBytes(("PID " + stranger.pid()).length()),
                StandardCharsets.UTF_8);
        assertThat(first).isEqualTo("PID " + stranger.pid());
        Path pgidFile = Files.createDirectories(fixture.stateDir.resolve("pgids")).resolve("stale-1.pgid");
        Files.writeString(pgidFile, stranger.pid() + "\n");

        assertThat(fixture.executor(Duration.ofSeconds(2)).killLeftovers()).isZero();

        assertThat(pgidFile).doesNotExist();
        assertThat(stranger.isAlive()).isTrue();
    }

    @Test
    void killLeftoversSparesTheExecutorsOwnTasks() throws Exception {
        RecordingOutput output = new RecordingOutput();
        TaskExecution execution = start(fixture.context("mine", "spawn_tree.py"), output);
        await().atMost(WAIT).until(() -> output.stdoutAfter("PIDS ").isPresent());
        await().atMost(WAIT).until(() -> Files.exists(fixture.stateDir.resolve("pgids/mine-7.pgid")));

        assertThat(executor.killLeftovers()).isZero();

        assertThat(execution.completion()).isNotDone();
        assertThat(pids(output.stdoutAfter("PIDS ").orElseThrow())).noneMatch(PythonTaskExecutorIT::gone);
    }

    @Test
    void theLauncherKillsItsGroupWhenItsStdinCloses() throws Exception {
        // What happens when the worker JVM dies: the kernel closes the pipe.
        Process launcher = startLauncherDirectly("jvm-died-1.pgid", "spawn_tree.py");
        List<Long> pids = readPids(launcher);
        launcher.getOutputStream().close();

        assertThat(launcher.waitFor(WAIT.toSeconds(), TimeUnit.SECONDS)).isTrue();
        await().atMost(Duration.ofSeconds(5)).untilAsserted(() -> assertThat(pids).allMatch(PythonTaskExecutorIT::gone));
        assertThat(fixture.stateDir.resolve("pgids/jvm-died-1.pgid")).doesNotExist();
    }

    /** Starts the launcher the way the executor does, but untracked by any executor. */
    private Process startLauncherDirectly(String pgidFileName, String script) throws IOException {
        Path state = Files.createDirectories(fixture.stateDir.resolve("pgids")).getParent();
        Path launcherFile = LauncherFile.extract(state);
        String stem = pgidFileName.substring(0, pgidFileName.length() - ".pgid".length());
        ProcessBuilder builder = new ProcessBuilder("python3", "-u", launcherFile.toString(), "--grace", "1",
                "--pgid-file", state.resolve("pgids").resolve(pgidFileName).toString(), "--",
                "python3", "-u", fixture.scriptRoot.resolve(script).toString())
                .redirectError(ProcessBuilder.Redirect.DISCARD);
        // As the executor would set them: how a sweep recognises a leaderless group's members.
        builder.environment().put("RLS_TASK_ID", stem.substring(0, stem.lastIndexOf('-')));
        builder.environment().put("RLS_EPOCH", stem.substring(stem.lastIndexOf('-') + 1));
        Process launcher = builder.start();
        strays.add(launcher.toHandle());
        return launcher;
    }

    private List<Long> readPids(Process launcher) throws IOException {
        StringBuilder line = new StringBuilder();
        int c;
        while ((c = launcher.getInputStream().read()) != -1 && c != '\n') {
            line.append((char) c);
        }
        assertThat(line.toString()).startsWith("PIDS ");
        List<Long> pids = pids(line.substring("PIDS ".length()));
        pids.forEach(pid -> ProcessHandle.of(pid).ifPresent(strays::add));
        return pids;
    }
}
