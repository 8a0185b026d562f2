package io.rlscheduler.core.internal;

import java.util.List;

/**
 * Tasks taken back from workers by a registration or a reaper pass. Immutable.
 */
public final class RequeueResult {

    private final List<String> requeued;
    private final List<String> failed;
    private final List<String> cancelled;
    private final boolean more;

    RequeueResult(List<String> requeued, List<String> failed, List<String> cancelled, boolean more) {
        this.requeued = java.util.List.copyOf(requeued);
        this.failed = java.util.List.copyOf(failed);
        this.cancelled = java.util.List.copyOf(cancelled);
        this.more = more;
    }

    /** Returns tasks put back in the queue. */
    public List<String> getRequeued() {
        return requeued;
    }

    /** Returns tasks failed because a limit was exhausted. */
    public List<String> getFailed() {
        return failed;
    }

    /** Returns tasks cancelled because a cancel had been requested. */
    public List<String> getCancelled() {
        return cancelled;
    }

    /** Returns whether more expired tasks may be waiting (the batch was full). */
    public boolean isMore() {
        return more;
    }

    @Override
    public String toString() {
        return "RequeueResult{" + "requeued=" + requeued + ", " + "failed=" + failed + ", " + "cancelled=" + cancelled + ", " + "more=" + more + '}';
    }
}
