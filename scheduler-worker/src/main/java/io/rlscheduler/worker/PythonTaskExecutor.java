package io.rlscheduler.worker;

import io.rlscheduler.core.TaskIds;
import io.rlscheduler.worker.internal.LauncherCommand;
import io.rlscheduler.worker.internal.LauncherFile;
import io.rlscheduler.worker.internal.LeftoverGroups;
import io.rlscheduler.worker.internal.ProcessExecution;
import io.rlscheduler.worker.internal.ProcessGroups;
import io.rlscheduler.worker.internal.ScriptPaths;
import io.rlscheduler.worker.internal.TaskEnvironment;
import io.rlscheduler.worker.internal.TaskParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Runs a task's python script as a supervised process group. Each attempt is started, without a
 * shell, as
 * <pre>
 * python3 -u STATE/launcher.py --grace SECONDS --pgid-file STATE/pgids/TASK-EPOCH.pgid --
 *     python3 -u SCRIPT --NAME VALUE ... EXTRA_ARGS...
 * </pre>
 * in the attempt's run directory. The launcher (shipped in this jar) leads a new session and
 * process group, runs the script in it, and kills the whole group (TERM, then KILL after the grace
 * period) when it is stopped, when the script ends, or when its stdin, a pipe this JVM holds open,
 * reaches its end because the JVM died. Its process-group id is recorded in a file in the state
 * directory so that the next worker can {@link #killLeftovers() kill} what a crashed one left.
 *
 * <p>The script is looked up under the script roots: absolute paths, {@code ..} segments, symbolic
 * links leading outside a root and anything but a regular file are refused. The environment is
 * the worker's, plus {@code CUDA_VISIBLE_DEVICES} (exactly the reserved GPU ids joined by ',', the
 * empty string for none), {@code CUDA_DEVICE_ORDER=PCI_BUS_ID}, {@code PYTHONUNBUFFERED=1},
 * {@code RLS_TASK_ID}, {@code RLS_ATTEMPT}, {@code RLS_EPOCH}, {@code RLS_TRACE_ID},
 * {@code RLS_RUN_DIR}, {@code RLS_CHECKPOINT_DIR}, {@code RLS_PARAMS_FILE} (absolute paths), then
 * the task spec's variables, which must not set {@code CUDA_VISIBLE_DEVICES},
 * {@code CUDA_DEVICE_ORDER} or any {@code RLS_*} key.
 *
 * <p>Each attempt uses two daemon reader threads ({@code rls-task-<id>-<attempt>-stdout} and
 * {@code -stderr}) for its lifetime; the {@link TaskOutput} is called on them, so a slow one slows
 * the script down (its pipe fills) rather than buffering without bound. Lines longer than 64 KiB
 * arrive in chunks. The launcher's own diagnostics arrive on stderr, prefixed {@code rls-launcher: }.
 * Completion waits for the group to be empty and both streams to end; a process that left the
 * launcher's session ({@code setsid}) while holding the output cannot be seen or killed, and after
 * 5 s the attempt completes without it, saying so in {@link ExecutionResult#getError()}.
 *
 * <p>Needs Linux: process groups are found through {@code /proc}. The state directory must belong
 * to this worker alone.
 *
 * <p>Thread-safe: one instance serves every task of a worker. Cheap to create; holds no threads
 * of its own, so it needs no shutdown.
 */
public final class PythonTaskExecutor implements TaskExecutor {

    private static final Logger LOG = LoggerFactory.getLogger(PythonTaskExecutor.class);

    /** Default python executable, looked up on the worker's PATH: {@value}. */
    public static final String DEFAULT_PYTHON = "python3";
    /** Default time between TERM and KILL when a task's process group is stopped: 10 s. */
    public static final Duration DEFAULT_GRACE_PERIOD = Duration.ofSeconds(10);
    /** Longest grace period: 1 h, the most the launcher accepts. */
    public static final Duration MAX_GRACE_PERIOD = Duration.ofHours(1);
    /** Name of the folder of pgid files inside the state directory. */
    public static final String PGID_DIRECTORY = "pgids";
    /** Suffix of a pgid file: {@code <taskId>-<epoch>.pgid}. */
    public static final String PGID_SUFFIX = ".pgid";
    /**
     * How the launcher's stderr line begins when it stopped a task itself because keepalives
     * stopped ({@link Builder#keepaliveTimeout(Duration)}): {@value}. The worker treats such an
     * attempt as fenced (its lease may lapse; it runs again), not as the script failing. A script
     * that printed this itself would only turn its own failure into a retry.
     */
    public static final String KEEPALIVE_FENCE_LINE = "rls-launcher: no keepalive from the worker";

    private final String python;
    private final List<Path> scriptRoots;
    private final Duration gracePeriod;
    private final Duration keepaliveTimeout;
    private final Path stateDirectory;
    private final Path pgidDirectory;
    /** Running attempts by pgid file, so {@link #killLeftovers()} spares them. */
    private final Map<Path, ProcessExecution> running = new ConcurrentHashMap<>();
    private final Object launcherLock = new Object();
    private Path launcher;

    private PythonTaskExecutor(Builder builder) {
        this.python = builder.python;
        this.scriptRoots = List.copyOf(builder.scriptRoots);
        this.gracePeriod = builder.gracePeriod;
        this.keepaliveTimeout = builder.keepaliveTimeout;
        this.stateDirectory = builder.stateDirectory.toAbsolutePath().normalize();
        this.pgidDirectory = stateDirectory.resolve(PGID_DIRECTORY);
    }

    /** Returns a new builder. */
    public static Builder builder() {
        return new Builder();
    }

    /** Returns the python executable. */
    public String getPython() {
        return python;
    }

    /** Returns the script roots, in lookup order; unmodifiable. */
    public List<Path> getScriptRoots() {
        return scriptRoots;
    }

    /** Returns the time between TERM and KILL given to the launcher. */
    public Duration getGracePeriod() {
        return gracePeriod;
    }

    /** Returns the state directory (absolute). */
    public Path getStateDirectory() {
        return stateDirectory;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Nothing is spawned when the context is refused: a script outside the roots, a missing run
     * directory, a parameter that is not a string, finite number or boolean, an environment
     * setting a reserved key. The stop grace given to {@link TaskExecution#stop} is capped at this
     * executor's grace period, which the launcher applies on its own if this JVM dies.
     */
    @Override
    public TaskExecution start(TaskContext context, TaskOutput output) throws TaskLaunchException {
        Objects.requireNonNull(context, "context");
        Objects.requireNonNull(output, "output");
        String name = "task " + context.getTaskId() + " attempt " + context.getAttempt();
        if (!TaskIds.isValid(context.getTaskId())) {
            throw new TaskLaunchException(name + ": invalid task id", null);
        }
        Path script;
        try {
            script = ScriptPaths.resolve(scriptRoots, context.getScript());
        } catch (IllegalArgumentException e) {
            throw new TaskLaunchException(name + ": script '" + context.getScript() + "' refused: " + e.getMessage(), e);
        }
        List<String> scriptArgs;
        Map<String, String> environment;
        try {
            scriptArgs = TaskParameters.scriptArguments(context.getParameters(), context.getArguments());
            environment = TaskEnvironment.variables(context);
        } catch (IllegalArgumentException e) {
            throw new TaskLaunchException(name + ": " + e.getMessage(), e);
        }
        if (!Files.isDirectory(context.getRunDir())) {
            throw new TaskLaunchException(name + ": run directory " + context.getRunDir() + " does not exist", null);
        }
        Path launcherFile;
        try {
            launcherFile = launcher();
        } catch (IOException e) {
            throw new TaskLaunchException(name + ": cannot install the launcher in " + stateDirectory + ": " + e, e);
        }
        Path pgidFile = pgidDirectory.resolve(context.getTaskId() + "-" + context.getEpoch() + PGID_SUFFIX);
        List<String> command = LauncherCommand.build(python, launcherFile, gracePeriod, keepaliveTimeout, pgidFile,
                script, scriptArgs);
        ProcessBuilder builder = new ProcessBuilder(command).directory(context.getRunDir().toFile());
        builder.environment().putAll(environment);
        Process process;
        try {
            process = builder.start();
        } catch (IOException | RuntimeException e) {
            throw new TaskLaunchException(name + ": cannot start " + python + ": " + e.getMessage(), e);
        }
        LOG.info("{}: started {} (pid {}, GPUs [{}])", name, script, process.pid(),
                environment.get(TaskEnvironment.CUDA_VISIBLE_DEVICES));
        String threadPrefix = "rls-task-" + context.getTaskId() + "-" + context.getAttempt();
        ProcessExecution execution = ProcessExecution.start(name, threadPrefix, process, script, python, pgidFile,
                gracePeriod, output);
        running.put(pgidFile, execution);
        execution.completion().whenComplete((r, t) -> running.remove(pgidFile, execution));
        return execution;
    }

    /**
     * Kills the process groups a previous worker process left behind: for each pgid file in the
     * state directory not belonging to an attempt of this executor, SIGKILLs the group if it still
     * exists and is ours (its leader is a launcher started with that very pgid file; or, if the
     * leader is gone, each member whose environment names the file's task and epoch), then deletes
     * the file. Call at worker start-up, before starting tasks. Blocks while it kills (at most about
     * a second per group). Does nothing where there is no {@code /proc}.
     *
     * @return the number of groups found alive and killed
     */
    public int killLeftovers() {
        if (!Files.isDirectory(pgidDirectory)) {
            return 0;
        }
        List<Path> files = new ArrayList<>();
        try (var stream = Files.newDirectoryStream(pgidDirectory, "*" + PGID_SUFFIX)) {
            stream.forEach(files::add);
        } catch (IOException e) {
            LOG.warn("cannot list {}: {}", pgidDirectory, e.toString());
            return 0;
        }
        int killed = 0;
        deleteStaleTemporaryFiles();
        for (Path file : files) {
            if (running.containsKey(file)) {
                continue;
            }
            if (LeftoverGroups.killIfOurs(file, PGID_SUFFIX)) {
                killed++;
            }
        }
        return killed;
    }

    /** The launcher writes {@code <name>.pgid.<pid>.tmp} and renames it; one that died in between leaves it. */
    private void deleteStaleTemporaryFiles() {
        try (var stream = Files.newDirectoryStream(pgidDirectory, "*" + PGID_SUFFIX + ".*.tmp")) {
            for (Path temp : stream) {
                String name = temp.getFileName().toString();
                String pid = name.substring(name.lastIndexOf(PGID_SUFFIX) + PGID_SUFFIX.length() + 1,
                        name.length() - ".tmp".length());
                if (!pid.chars().allMatch(Character::isDigit) || !ProcessGroups.isRunning(Long.parseLong(pid))) {
                    Files.deleteIfExists(temp); // a live launcher may be about to rename it
                }
            }
        } catch (IOException e) {
            LOG.warn("cannot clean {}: {}", pgidDirectory, e.toString());
        }
    }

    private Path launcher() throws IOException {
        synchronized (launcherLock) {
            // Checked every time: a tmp cleaner may have removed it since.
            if (launcher == null || !Files.isRegularFile(launcher)) {
                createPrivateDirectory(stateDirectory);
                launcher = LauncherFile.extract(stateDirectory);
            }
            createPrivateDirectory(pgidDirectory);
            return launcher;
        }
    }

    /** Creates a directory readable by this user only (it holds code the worker runs). */
    private static void createPrivateDirectory(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            return;
        }
        try {
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } catch (UnsupportedOperationException e) {
            Files.createDirectories(dir);
        }
    }

    /**
     * Builds a {@link PythonTaskExecutor}. Setters validate at once; {@link #build()} checks that
     * the required settings (script roots, state directory) were given. Not thread-safe.
     */
    public static final class Builder {

        private String python = DEFAULT_PYTHON;
        private final List<Path> scriptRoots = new ArrayList<>();
        private Duration gracePeriod = DEFAULT_GRACE_PERIOD;
        private Duration keepaliveTimeout = Duration.ZERO;
        private Path stateDirectory;

        private Builder() {
        }

        /**
         * Sets the python executable for the launcher and the script: a name looked up on the
         * PATH, or a path. Default {@value PythonTaskExecutor#DEFAULT_PYTHON}.
         */
        public Builder pythonExecutable(String python) {
            Objects.requireNonNull(python, "python");
            if (python.isBlank() || python.indexOf('\0') >= 0) {
                throw new IllegalArgumentException("python executable must not be blank or contain NUL");
            }
            this.python = python;
            return this;
        }

        /**
         * Replaces the script roots: the directories task scripts are looked up in, in order.
         * Required, at least one.
         */
        public Builder scriptRoots(List<Path> roots) {
            Objects.requireNonNull(roots, "roots");
            List<Path> copy = new ArrayList<>(roots.size());
            for (Path root : roots) {
                copy.add(Objects.requireNonNull(root, "script root").toAbsolutePath().normalize());
            }
            scriptRoots.clear();
            scriptRoots.addAll(copy);
            return this;
        }

        /** Adds a script root after those already set. */
        public Builder scriptRoot(Path root) {
            scriptRoots.add(Objects.requireNonNull(root, "root").toAbsolutePath().normalize());
            return this;
        }

        /**
         * Sets the time between TERM and KILL when a task's group is stopped, also applied by the
         * launcher on its own when the worker dies. Millisecond precision; zero means KILL at once;
         * at most {@link #MAX_GRACE_PERIOD}. Default 10 s.
         */
        public Builder gracePeriod(Duration grace) {
            Objects.requireNonNull(grace, "grace");
            if (grace.isNegative() || grace.compareTo(MAX_GRACE_PERIOD) > 0) {
                throw new IllegalArgumentException("grace period must be between 0 and " + MAX_GRACE_PERIOD
                        + ", was " + grace);
            }
            this.gracePeriod = grace;
            return this;
        }

        /**
         * Sets how long the launcher waits for a keepalive ({@link TaskExecution#keepAlive()}) before
         * it stops the task's group by itself; zero (default) turns the check off. The worker sets
         * it below the task lease, so a frozen worker's task stops before its lease can expire.
         * Millisecond precision, at most 24 h.
         */
        public Builder keepaliveTimeout(Duration timeout) {
            Objects.requireNonNull(timeout, "timeout");
            if (timeout.isNegative() || timeout.compareTo(Duration.ofHours(24)) > 0) {
                throw new IllegalArgumentException("keepalive timeout must be between 0 and 24 h, was " + timeout);
            }
            this.keepaliveTimeout = timeout;
            return this;
        }

        /**
         * Sets the worker's private state directory: it receives the launcher and the pgid files
         * ({@code pgids/<taskId>-<epoch>.pgid}), and is created (mode 700) if missing. Required;
         * must not be shared with another worker, whose tasks {@link #killLeftovers()} would kill.
         */
        public Builder stateDirectory(Path dir) {
            this.stateDirectory = Objects.requireNonNull(dir, "dir");
            return this;
        }

        /**
         * Returns the executor.
         *
         * @throws IllegalStateException if no script root or no state directory was set
         */
        public PythonTaskExecutor build() {
            if (scriptRoots.isEmpty()) {
                throw new IllegalStateException("at least one script root is required");
            }
            if (stateDirectory == null) {
                throw new IllegalStateException("the state directory is required");
            }
            return new PythonTaskExecutor(this);
        }
    }
}
