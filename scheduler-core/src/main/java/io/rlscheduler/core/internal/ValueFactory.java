package io.rlscheduler.core.internal;

import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.AttemptOutputs;
import io.rlscheduler.core.OutputsState;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskPage;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.TaskTransition;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.WorkerState;
import java.lang.invoke.MethodHandles;
import java.util.List;
import java.util.Map;

/**
 * Creates for this package the values of {@code io.rlscheduler.core} whose constructors are
 * not API:
 * {@link TaskRecord}, {@link TaskPage}, {@link TaskTransition}, {@link TaskEvent}, {@link WorkerInfo},
 * {@link AttemptProvenance}, {@link AttemptOutputs}.
 * The one implementation lives in that package and installs itself when {@link TaskRecord}
 * is initialized; {@link #get()} initializes it first. Thread-safe.
 */
public abstract class ValueFactory {

    private static volatile ValueFactory installed;

    /** For the one implementation, in {@code io.rlscheduler.core}. */
    protected ValueFactory() {
    }

    /**
     * Installs the implementation; called once, from the static initializer of
     * {@link TaskRecord}.
     *
     * @throws IllegalStateException when one is installed already
     */
    public static synchronized void install(ValueFactory factory) {
        if (installed != null) {
            throw new IllegalStateException("a value factory is installed already");
        }
        installed = factory;
    }

    /** Returns the installed factory, initializing {@link TaskRecord} first. */
    static ValueFactory get() {
        ValueFactory factory = installed;
        if (factory == null) {
            try {
                MethodHandles.lookup().ensureInitialized(TaskRecord.class);
            } catch (IllegalAccessException e) {
                throw new IllegalStateException(e);
            }
            factory = installed;
        }
        return factory;
    }

    /** Returns a new {@link TaskRecord} of these values, as its constructor does. */
    protected abstract TaskRecord taskRecord(String taskId, TaskState state, int priority, long submitSequence, int gpus, int cpuSlots, long memoryBytes, Map<String, String> selector, String owner, String traceId, int maxAttempts, int maxLeaseLosses, int attempt, int leaseLosses, long epoch, String workerId, List<Integer> gpuIds, boolean cancelRequested, Integer exitCode, String error, String finalMetricsJson, String reason, long createdAtMillis, long updatedAtMillis, long deadlineMillis, List<TaskTransition> history, String specJson, String runDir, long logLines, String artifactError, long logCutAt);

    /** Returns a new {@link TaskPage} of these values, as its constructor does. */
    protected abstract TaskPage taskPage(List<TaskRecord> tasks, long total);

    /** Returns a new {@link TaskTransition} of these values, as its constructor does. */
    protected abstract TaskTransition taskTransition(long atMillis, TaskState from, TaskState to, long epoch, String workerId, String reason);

    /** Returns a new {@link TaskEvent} of these values, as its constructor does. */
    protected abstract TaskEvent taskEvent(String streamId, String type, Map<String, String> fields);

    /** Returns a new {@link TaskEvent} of these values, as its constructor does. */
    protected abstract TaskEvent taskEvent(String streamId, String type, Map<String, String> fields, boolean copy);

    /** Returns a new {@link WorkerInfo} of these values, as its constructor does. */
    protected abstract WorkerInfo workerInfo(String workerId, String sessionId, Map<String, String> labels, WorkerState state, int cpuSlots, long memoryBytes, List<Integer> gpuIds, int freeCpuSlots, long freeMemoryBytes, List<Integer> freeGpuIds, List<TaskLease> tasks, long lastHeartbeatMillis, long livenessDeadlineMillis);

    /** Returns a new {@link AttemptProvenance} of these values, as its constructor does. */
    protected abstract AttemptProvenance attemptProvenance(String taskId, int attempt, long epoch, String workerId, String hostname, String scriptFile, String scriptSha256, String gitCommit, boolean gitDirty, String interpreter, String interpreterVersion, List<Integer> gpuIds, List<String> gpuUuids);

    /** Returns a new {@link AttemptOutputs} of these values, as its constructor does. */
    protected abstract AttemptOutputs attemptOutputs(int attempt, long epoch, String workerId, OutputsState state, String manifestKey, int files, long bytes, String error, List<String> skipped, int skippedCount, long updatedAtMillis);
}
