package io.rlscheduler.master.internal;

import io.rlscheduler.core.internal.LeaderStatus;
import io.rlscheduler.core.internal.LeaseCore;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes back expired leases while this master leads: each pass is one reap script run, fenced by
 * the leadership epoch, and a pass that hit its batch limit is followed at once by another. What a
 * pass re-queues is signalled to the dispatcher. Never blocks: the script's answer is handled where
 * it completes.
 */
public final class Reaper {

    private static final Logger log = LoggerFactory.getLogger(Reaper.class);

    private final LeaseCore core;
    private final Supplier<LeaderStatus> leadership;
    private final Dispatcher dispatcher;
    private final Executor again;
    private final AtomicLong passes = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();

    /**
     * @param again where a follow-up pass runs when a pass left expired leases behind (the master's timer thread)
     */
    public Reaper(LeaseCore core, Supplier<LeaderStatus> leadership, Dispatcher dispatcher, Executor again) {
        this.core = core;
        this.leadership = leadership;
        this.dispatcher = dispatcher;
        this.again = again;
    }

    /** Runs one pass if this master leads. */
    public void reapOnce() {
        LeaderStatus leader = leadership.get();
        if (leader == null || !leader.isSelf()) {
            return;
        }
        core.reap(leader).whenComplete((result, error) -> {
            passes.incrementAndGet();
            if (error != null) {
                failures.incrementAndGet();
                log.warn("reaper pass failed: {}", error.toString());
                return;
            }
            if (!result.getRequeued().isEmpty() || !result.getFailed().isEmpty() || !result.getCancelled().isEmpty()) {
                log.info("reaper took back tasks: requeued {}, failed {}, cancelled {}", result.getRequeued(),
                        result.getFailed(), result.getCancelled());
                dispatcher.taskQueued();
            }
            if (result.isMore()) {
                try {
                    again.execute(this::reapOnce);
                } catch (RejectedExecutionException stopping) {
                    // the master is stopping; the next leader's reaper goes on
                }
            }
        });
    }

    /** Returns how many passes ran (failed ones included). */
    public long getPasses() {
        return passes.get();
    }

    /** Returns how many passes failed. */
    public long getFailures() {
        return failures.get();
    }
}
