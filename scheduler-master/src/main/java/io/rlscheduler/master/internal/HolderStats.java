package io.rlscheduler.master.internal;

import java.util.concurrent.atomic.LongAdder;

/** What the holder checks of all connections refused, for {@code health()}. Thread-safe. */
public final class HolderStats {

    private final LongAdder notHolder = new LongAdder();
    private final LongAdder stale = new LongAdder();
    private final LongAdder unknownTask = new LongAdder();
    private final LongAdder disconnects = new LongAdder();

    void refused(AttemptHolders.Verdict verdict) {
        switch (verdict) {
            case STALE -> stale.increment();
            case UNKNOWN_TASK -> unknownTask.increment();
            default -> notHolder.increment();
        }
    }

    void disconnected() {
        disconnects.increment();
    }

    /** Frames refused because another worker or session holds the attempt, or none was assigned. */
    public long notHolder() {
        return notHolder.sum();
    }

    /** Frames refused because their attempt is not the task's current one. */
    public long stale() {
        return stale.sum();
    }

    /** Frames refused because no task has their task id. */
    public long unknownTask() {
        return unknownTask.sum();
    }

    /** Connections closed for repeated NOT_HOLDER or UNKNOWN_TASK frames. */
    public long disconnects() {
        return disconnects.sum();
    }
}
