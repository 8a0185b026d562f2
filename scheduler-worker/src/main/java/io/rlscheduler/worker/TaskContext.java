package io.rlscheduler.worker;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Everything an executor needs to run one attempt of a task. Prepared by the worker: the run
 * directory (one per attempt) and the checkpoint directory (shared by all attempts of the task)
 * exist, and the parameter file is written. Immutable.
 */
public final class TaskContext {

    private final String taskId;
    private final long epoch;
    private final int attempt;
    private final String traceId;
    private final String script;
    private final List<String> arguments;
    private final Map<String, Object> parameters;
    private final List<Integer> gpuIds;
    private final Map<String, String> environment;
    private final Path runDir;
    private final Path checkpointDir;
    private final Path parametersFile;
    private final Duration timeout;

    /**
     * Creates a context; see the getters for each argument.
     */
    public TaskContext(String taskId, long epoch, int attempt, String traceId, String script, List<String> arguments,
                       Map<String, Object> parameters, List<Integer> gpuIds, Map<String, String> environment,
                       Path runDir, Path checkpointDir, Path parametersFile, Duration timeout) {
        this.taskId = Objects.requireNonNull(taskId, "taskId");
        this.epoch = epoch;
        this.attempt = attempt;
        this.traceId = Objects.requireNonNull(traceId, "traceId");
        this.script = Objects.requireNonNull(script, "script");
        this.arguments = List.copyOf(arguments);
        this.parameters = java.util.Collections.unmodifiableMap(new java.util.LinkedHashMap<>(parameters));
        this.gpuIds = List.copyOf(gpuIds);
        this.environment = Map.copyOf(environment);
        this.runDir = Objects.requireNonNull(runDir, "runDir");
        this.checkpointDir = Objects.requireNonNull(checkpointDir, "checkpointDir");
        this.parametersFile = Objects.requireNonNull(parametersFile, "parametersFile");
        this.timeout = timeout;
    }

    /** Returns the task id. */
    public String getTaskId() { return taskId; }
    /** Returns the fencing epoch of this attempt. */
    public long getEpoch() { return epoch; }
    /** Returns the attempt number, 1 for the first. */
    public int getAttempt() { return attempt; }
    /** Returns the trace id. */
    public String getTraceId() { return traceId; }
    /** Returns the script as submitted: a path relative to one of the worker's script roots. */
    public String getScript() { return script; }
    /** Returns extra arguments, passed after the parameters; unmodifiable. */
    public List<String> getArguments() { return arguments; }
    /** Returns the parameters (name to String, Number or Boolean), in submission order; unmodifiable. */
    public Map<String, Object> getParameters() { return parameters; }
    /** Returns the GPU ids reserved for this attempt, ascending; unmodifiable. */
    public List<Integer> getGpuIds() { return gpuIds; }
    /** Returns extra environment variables from the task spec; unmodifiable. */
    public Map<String, String> getEnvironment() { return environment; }
    /**
     * Returns this attempt's own directory (exists, unless the executor said it uses no run
     * directories: {@link TaskExecutor#usesRunDirectories()}).
     */
    public Path getRunDir() { return runDir; }
    /** Returns the checkpoint directory shared by the task's attempts (exists, with the same exception). */
    public Path getCheckpointDir() { return checkpointDir; }
    /** Returns the JSON file holding the parameters (exists, with the same exception). */
    public Path getParametersFile() { return parametersFile; }
    /** Returns the timeout of the attempt, or null for none; enforced by the worker, not the executor. */
    public Duration getTimeout() { return timeout; }
}
