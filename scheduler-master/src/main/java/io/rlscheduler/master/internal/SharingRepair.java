package io.rlscheduler.master.internal;

import io.rlscheduler.core.SharingCorrection;
import io.rlscheduler.core.internal.LeaderStatus;
import io.rlscheduler.core.internal.OwnerRecords;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The repair pass of the sharing between owners while this master leads (owners_repair.lua): the
 * owners' counters, queues and reservations rebuilt from the task records where they disagree,
 * each correction logged and counted. Never blocks: the script's answer is handled where it
 * completes; a pass does not start while the last one runs.
 */
public final class SharingRepair {

    private static final Logger log = LoggerFactory.getLogger(SharingRepair.class);

    /** The longest queue whose side a pass checks: one script run reads every queued record. */
    public static final int MAX_QUEUE = 50_000;

    private final OwnerRecords owners;
    private final Supplier<LeaderStatus> leadership;
    private final Runnable dispatch;
    private final AtomicBoolean running = new AtomicBoolean();
    private final AtomicLong passes = new AtomicLong();
    private final AtomicLong corrections = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();

    /**
     * @param dispatch run after a pass that corrected something (tasks may be claimable now)
     */
    public SharingRepair(OwnerRecords owners, Supplier<LeaderStatus> leadership, Runnable dispatch) {
        this.owners = owners;
        this.leadership = leadership;
        this.dispatch = dispatch;
    }

    /** Runs one pass if this master leads and none is running. */
    public void runOnce() {
        LeaderStatus leader = leadership.get();
        if (leader == null || !leader.isSelf() || !running.compareAndSet(false, true)) {
            return;
        }
        try {
            run().whenComplete((r, e) -> running.set(false));
        } catch (RuntimeException e) {
            running.set(false);
            failures.incrementAndGet();
            log.warn("sharing repair pass could not start: {}", e.toString());
        }
    }

    /** Runs one pass now, leader or not, and returns what it corrected. */
    public CompletableFuture<OwnerRecords.Repair> run() {
        return owners.repair(MAX_QUEUE).whenComplete((result, error) -> {
            passes.incrementAndGet();
            if (error != null) {
                failures.incrementAndGet();
                log.warn("sharing repair pass failed: {}", error.toString());
                return;
            }
            List<SharingCorrection> fixed = result.corrections();
            if (!fixed.isEmpty()) {
                corrections.addAndGet(fixed.size());
                log.warn("sharing repair pass: {} figure(s) disagreed with the task records and were corrected: {}",
                        fixed.size(), fixed);
                dispatch.run();
            }
            if (!result.queueChecked()) {
                log.info("sharing repair pass: the queue holds more than {} tasks; only what workers hold was checked",
                        MAX_QUEUE);
            }
        });
    }

    /** Returns how many passes ran since start, failed ones included. */
    public long getPasses() { return passes.get(); }

    /** Returns how many corrections the passes made since start. */
    public long getCorrections() { return corrections.get(); }

    /** Returns how many passes failed since start. */
    public long getFailures() { return failures.get(); }
}
