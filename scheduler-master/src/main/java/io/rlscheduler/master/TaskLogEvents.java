package io.rlscheduler.master;

import io.rlscheduler.core.internal.ArtifactRecords;
import io.rlscheduler.master.internal.AttemptHolders;
import io.rlscheduler.master.internal.OpenAttemptIndex;
import io.rlscheduler.master.internal.log.LogEvents;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the master does when its log manager tells of an attempt's end or a log's cut (see
 * {@link LogEvents}): an ended attempt is no longer open for the worker connection that sent its
 * lines, and once its log is complete its holder is expected to send no more of them
 * ({@link AttemptHolders#logEnded}): after an incomplete end, lines that still come are written,
 * so its holder stays known until the sweep. A cut is noted in the task's record
 * ({@code TaskRecord.isLogCut()}), asynchronously. A note Redis does not take is logged and not
 * retried: the log file's cut marker stays the record of it.
 */
final class TaskLogEvents implements LogEvents {

    private static final Logger log = LoggerFactory.getLogger(TaskLogEvents.class);

    private final OpenAttemptIndex openAttempts;
    private final AttemptHolders holders;
    private final ArtifactRecords records;

    TaskLogEvents(OpenAttemptIndex openAttempts, AttemptHolders holders, ArtifactRecords records) {
        this.openAttempts = openAttempts;
        this.holders = holders;
        this.records = records;
    }

    @Override
    public void attemptEnded(String taskId, long epoch, boolean complete) {
        openAttempts.attemptEnded(taskId, epoch);
        if (complete) {
            holders.logEnded(taskId, epoch);
        }
    }

    @Override
    public void logCut(String taskId, long epoch, long bytes) {
        records.noteLogCut(taskId, bytes).whenComplete((written, error) -> {
            if (error != null) {
                log.warn("task {}: cannot note in its record that its log was cut at {} bytes: {}", taskId, bytes,
                        error.toString());
            }
        });
    }
}
