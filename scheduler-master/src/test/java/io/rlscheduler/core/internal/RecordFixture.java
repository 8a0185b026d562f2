package io.rlscheduler.core.internal;

import io.rlscheduler.core.TaskRecord;

/**
 * Task records for the master's unit tests, which have no Redis to read them from. In the core's
 * internal package because a record is made only there: this builds the record a submission
 * creates, as the core does for submit's answer.
 */
public final class RecordFixture {

    private RecordFixture() {
    }

    /** Returns the record of a task just submitted with this spec. */
    public static TaskRecord queued(String taskId, String specJson) {
        return Replies.queued(TaskDefinition.builder(taskId).specJson(specJson).build(), 1, 1_700_000_000_000L, 3, 2);
    }
}
