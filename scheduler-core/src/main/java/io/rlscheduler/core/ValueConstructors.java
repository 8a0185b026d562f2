package io.rlscheduler.core;

import io.rlscheduler.core.internal.ValueFactory;
import java.util.List;
import java.util.Map;

/** The package-private constructors of this package's value types, for {@link ValueFactory}. */
final class ValueConstructors extends ValueFactory {

    @Override
    protected TaskRecord taskRecord(String taskId, TaskState state, int priority, long submitSequence, int gpus, int cpuSlots, long memoryBytes, Map<String, String> selector, String owner, String traceId, int maxAttempts, int maxLeaseLosses, int attempt, int leaseLosses, long epoch, String workerId, List<Integer> gpuIds, boolean cancelRequested, Integer exitCode, String error, String finalMetricsJson, String reason, long createdAtMillis, long updatedAtMillis, long deadlineMillis, List<TaskTransition> history, String specJson, String runDir, long logLines, String artifactError, long logCutAt) {
        return new TaskRecord(taskId, state, priority, submitSequence, gpus, cpuSlots, memoryBytes, selector, owner, traceId, maxAttempts, maxLeaseLosses, attempt, leaseLosses, epoch, workerId, gpuIds, cancelRequested, exitCode, error, finalMetricsJson, reason, createdAtMillis, updatedAtMillis, deadlineMillis, history, specJson, runDir, logLines, artifactError, logCutAt);
    }

    @Override
    protected TaskPage taskPage(List<TaskRecord> tasks, long total) {
        return new TaskPage(tasks, total);
    }

    @Override
    protected TaskTransition taskTransition(long atMillis, TaskState from, TaskState to, long epoch, String workerId, String reason) {
        return new TaskTransition(atMillis, from, to, epoch, workerId, reason);
    }

    @Override
    protected TaskEvent taskEvent(String streamId, String type, Map<String, String> fields) {
        return new TaskEvent(streamId, type, fields);
    }

    @Override
    protected TaskEvent taskEvent(String streamId, String type, Map<String, String> fields, boolean copy) {
        return new TaskEvent(streamId, type, fields, copy);
    }

    @Override
    protected WorkerInfo workerInfo(String workerId, String sessionId, Map<String, String> labels, WorkerState state, int cpuSlots, long memoryBytes, List<Integer> gpuIds, int freeCpuSlots, long freeMemoryBytes, List<Integer> freeGpuIds, List<TaskLease> tasks, long lastHeartbeatMillis, long livenessDeadlineMillis) {
        return new WorkerInfo(workerId, sessionId, labels, state, cpuSlots, memoryBytes, gpuIds, freeCpuSlots, freeMemoryBytes, freeGpuIds, tasks, lastHeartbeatMillis, livenessDeadlineMillis);
    }

    @Override
    protected AttemptProvenance attemptProvenance(String taskId, int attempt, long epoch, String workerId, String hostname, String scriptFile, String scriptSha256, String gitCommit, boolean gitDirty, String interpreter, String interpreterVersion, List<Integer> gpuIds, List<String> gpuUuids) {
        return new AttemptProvenance(taskId, attempt, epoch, workerId, hostname, scriptFile, scriptSha256, gitCommit, gitDirty, interpreter, interpreterVersion, gpuIds, gpuUuids);
    }

    @Override
    protected AttemptOutputs attemptOutputs(int attempt, long epoch, String workerId, OutputsState state, String manifestKey, int files, long bytes, String error, List<String> skipped, int skippedCount, long updatedAtMillis) {
        return new AttemptOutputs(attempt, epoch, workerId, state, manifestKey, files, bytes, error, skipped, skippedCount, updatedAtMillis);
    }
}
