package io.rlscheduler.master.internal;

import io.rlscheduler.core.internal.LeaderStatus;
import io.rlscheduler.core.internal.LeaseCore;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps this master's view of the leadership lease: acquires or renews it (or, on a standby-only
 * master, only reads who holds it) every third of the lease, and tells the master when it becomes
 * or stops being the leader. A leader that cannot renew for a whole lease steps down: its view
 * becomes unknown, and neither dispatch nor reaping runs until the next successful call. Runs on
 * the master's timer thread, which may wait on Redis.
 */
public final class LeaderElector {

    private static final Logger log = LoggerFactory.getLogger(LeaderElector.class);

    /** What the master does when its leadership changes. */
    public interface Listener {
        /** This master now leads: what it believed about the queue meanwhile is stale. */
        void becameLeader(LeaderStatus status);

        /** This master no longer leads, or can no longer be sure it does. */
        void stoppedLeading();
    }

    private final LeaseCore core;
    private final String masterId;
    private final Duration lease;
    private final boolean standbyOnly;
    private final Listener listener;
    private volatile String address = "";
    private volatile LeaderStatus leadership;
    private volatile long renewedNanos;

    public LeaderElector(LeaseCore core, String masterId, Duration lease, boolean standbyOnly, Listener listener) {
        this.core = core;
        this.masterId = masterId;
        this.lease = lease;
        this.standbyOnly = standbyOnly;
        this.listener = listener;
    }

    /** Sets the address written into the lease for workers to be sent to; before the first {@link #elect()}. */
    public void advertise(String address) {
        this.address = address;
    }

    /** Returns how often {@link #elect()} should run: a third of the lease, at least 1 ms. */
    public long periodMillis() {
        return Math.max(1, lease.toMillis() / 3);
    }

    /** Returns the leadership as of the last successful call, or null when unknown. */
    public LeaderStatus current() {
        return leadership;
    }

    /** Returns whether this master holds the leadership lease, as of its last renewal. */
    public boolean isLeader() {
        LeaderStatus l = leadership;
        return l != null && l.isSelf();
    }

    /** Acquires or renews the lease (reads it, on a standby-only master); on a change, tells the listener. */
    public void elect() {
        LeaderStatus before = leadership;
        LeaderStatus now;
        long sent = System.nanoTime();
        try {
            CompletableFuture<LeaderStatus> call = standbyOnly ? core.observeLeadership()
                    : core.acquireLeadership(masterId, address, lease);
            now = call.get(lease.toMillis(), TimeUnit.MILLISECONDS);
            renewedNanos = sent;
        } catch (InterruptedException stopping) {
            Thread.currentThread().interrupt(); // the master is stopping: its timers are shut down
            return;
        } catch (Exception e) {
            if (before != null && before.isSelf() && System.nanoTime() - renewedNanos > lease.toNanos()) {
                log.warn("master {} could not renew its leadership for {}: stepping down ({})", masterId, lease,
                        e.toString());
                leadership = null;
                listener.stoppedLeading();
            } else {
                log.warn("leadership renewal of master {} failed: {}", masterId, e.toString());
            }
            return;
        }
        leadership = now;
        boolean was = before != null && before.isSelf();
        if (now.isSelf() && !was) {
            log.info("master {} is the leader (leadership epoch {})", masterId, now.getEpoch());
            listener.becameLeader(now);
        } else if (!now.isSelf() && was) {
            log.warn("master {} lost the leadership to {} (epoch {})", masterId, now.getLeaderId(), now.getEpoch());
            listener.stoppedLeading();
        } else if (before == null && !now.isSelf()) {
            log.info("master {} is a {}; the leader is {} at {}", masterId, standbyOnly ? "standby-only master" : "standby",
                    now.getLeaderId().isEmpty() ? "(none)" : now.getLeaderId(), now.getAddress());
        }
    }

    /** Gives the lease up if this master holds it, waiting up to 2 s; for an orderly stop. */
    public void resign() {
        if (!isLeader()) {
            return;
        }
        try {
            core.resignLeadership(masterId).get(2, TimeUnit.SECONDS);
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            log.debug("could not resign leadership: {}", e.toString());
        }
    }
}
