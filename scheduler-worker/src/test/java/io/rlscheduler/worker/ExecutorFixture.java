package io.rlscheduler.worker;

import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** Builds executors and contexts over the fixture scripts in test resources {@code scripts/}. */
final class ExecutorFixture {

    final Path scriptRoot;
    final Path stateDir;
    final RunDirectories runs;

    ExecutorFixture(Path temp) {
        try {
            this.scriptRoot = Path.of(ExecutorFixture.class.getResource("/scripts").toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
        this.stateDir = temp.resolve("state");
        this.runs = new RunDirectories(temp.resolve("runs"));
    }

    PythonTaskExecutor executor(Duration grace) {
        return PythonTaskExecutor.builder().scriptRoot(scriptRoot).stateDirectory(stateDir).gracePeriod(grace).build();
    }

    TaskContext context(String taskId, String script) {
        return context(taskId, script, Map.of(), List.of(), List.of(), Map.of());
    }

    TaskContext context(String taskId, String script, Map<String, Object> params, List<String> args,
                        List<Integer> gpus, Map<String, String> env) {
        int attempt = 1;
        RunDirectories.Attempt dirs = runs.prepare(taskId, attempt, params);
        return new TaskContext(taskId, 7, attempt, "trace-" + taskId, script, args, params, gpus, env,
                dirs.getRunDir(), dirs.getCheckpointDir(), dirs.getParametersFile(), null);
    }

    /** Returns the pids of this JVM's live children. */
    static Set<Long> children() {
        return ProcessHandle.current().children().filter(ProcessHandle::isAlive).map(ProcessHandle::pid)
                .collect(Collectors.toSet());
    }
}
