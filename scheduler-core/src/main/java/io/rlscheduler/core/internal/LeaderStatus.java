package io.rlscheduler.core.internal;

/**
 * Who holds the masters' leadership lease, as seen by one master's acquire or renew call.
 * The epoch is the lease's own fencing epoch: claims and reaps made with an older epoch are refused.
 * Immutable.
 */
public final class LeaderStatus {

    private final String leaderId;
    private final long epoch;
    private final String address;
    private final boolean self;
    private final long deadlineMillis;

    LeaderStatus(String leaderId, long epoch, String address, boolean self, long deadlineMillis) {
        this.leaderId = leaderId;
        this.epoch = epoch;
        this.address = address;
        this.self = self;
        this.deadlineMillis = deadlineMillis;
    }

    /** Returns the id of the master holding the lease, or the empty string when none does. */
    public String getLeaderId() {
        return leaderId;
    }

    /** Returns the leadership epoch, increased each time leadership changes hands. */
    public long getEpoch() {
        return epoch;
    }

    /** Returns the leader's RPC address (host:port) for workers, or the empty string. */
    public String getAddress() {
        return address;
    }

    /** Returns whether the calling master is the leader. */
    public boolean isSelf() {
        return self;
    }

    /** Returns when the lease ends unless renewed, ms by the Redis clock. */
    public long getDeadlineMillis() {
        return deadlineMillis;
    }

    @Override
    public String toString() {
        return "LeaderStatus{" + "leaderId=" + leaderId + ", " + "epoch=" + epoch + ", " + "address=" + address + ", " + "self=" + self + ", " + "deadlineMillis=" + deadlineMillis + '}';
    }
}
