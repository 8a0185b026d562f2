package io.rlscheduler.master;

import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.master.internal.log.TaskLogManager;
import java.util.concurrent.CompletableFuture;

/**
 * The log manager's record lookup (see {@link TaskLogManager.RecordLookup}): a task's newest
 * attempt, whether it ended (then the log manager looks for its log in the artifact store), and
 * how a task that has no log file here ended, read from its record in Redis.
 */
final class TaskRecordLookup implements TaskLogManager.RecordLookup {

    private final LeaseCore core;

    TaskRecordLookup(LeaseCore core) {
        this.core = core;
    }

    @Override
    public CompletableFuture<TaskLogManager.Recorded> lookUp(String taskId) {
        return core.getTask(taskId).thenApply(found -> found.map(task -> new TaskLogManager.Recorded(
                task.getAttempt() == 0 ? -1 : task.getEpoch(), task.getAttempt(), task.getTraceId(), endWithoutLog(task),
                task.getState().isTerminal())).orElse(null));
    }

    /**
     * The END_OF_STREAM for followers of a task that has no log file here, or null to wait. A task
     * ended with no line to come when its worker recorded that its last attempt printed nothing,
     * or when it never ran; one that ended without its worker recording the end (failed by the
     * reaper, cancelled on a lost worker) ends its followers marked incomplete, as the manager's
     * abandon would. A task not ended, or whose last attempt printed lines that are not in a file
     * yet, is waited for.
     */
    private static LogRecord endWithoutLog(TaskRecord task) {
        if (!task.getState().isTerminal()) {
            return null;
        }
        String taskId = task.getTaskId();
        TaskState state = task.getState();
        if (task.getAttempt() == 0 || task.getLogLines() == 0) {
            return LogRecord.endOfStream(taskId, task.getAttempt(), task.getEpoch(), state, true, null);
        }
        if (task.getLogLines() > 0) {
            return null;
        }
        return LogRecord.endOfStream(taskId, task.getAttempt(), task.getEpoch(), state, false,
                "the task ended without its worker recording where its log ends, and this master has no log"
                        + " file for it", task.getLogCutAt());
    }
}
