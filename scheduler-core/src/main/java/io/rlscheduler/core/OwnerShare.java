package io.rlscheduler.core;

/**
 * One owner's place in the sharing of the lab (as Slurm's {@code sshare} shows it): its limits as
 * they apply (its own over the lab's defaults), its decayed usage, and what it holds and waits for
 * now. Read in one consistent snapshot. Immutable.
 */
public final class OwnerShare {

    private final String owner;
    private final OwnerLimits limits;
    private final double usage;
    private final int heldGpus;
    private final int running;
    private final int queued;

    public OwnerShare(String owner, OwnerLimits limits, double usage, int heldGpus, int running, int queued) {
        this.owner = owner;
        this.limits = limits;
        this.usage = usage;
        this.heldGpus = heldGpus;
        this.running = running;
        this.queued = queued;
    }

    /** Returns the owner. */
    public String getOwner() { return owner; }

    /** Returns the limits that apply to the owner: its own, else the lab's defaults. */
    public OwnerLimits getLimits() { return limits; }

    /** Returns the owner's weight (its share; 1 unless set). */
    public double getWeight() { return limits.getWeight().orElse(1); }

    /**
     * Returns the owner's decayed usage now, in slot-seconds: GPU-seconds of its GPU tasks plus
     * CPU-slot-seconds of its tasks that use no GPU, each halved every half-life since it was charged.
     */
    public double getUsage() { return usage; }

    /** Returns the decayed usage divided by the weight: the lowest goes first. */
    public double getUsagePerShare() { return usage / getWeight(); }

    /** Returns the GPUs its ASSIGNED and RUNNING tasks hold. */
    public int getHeldGpus() { return heldGpus; }

    /** Returns how many of its tasks workers hold (ASSIGNED or RUNNING). */
    public int getRunning() { return running; }

    /** Returns how many of its tasks are QUEUED (parked ones too). */
    public int getQueued() { return queued; }

    @Override
    public String toString() {
        return "OwnerShare{owner=" + owner + ", usage=" + usage + ", heldGpus=" + heldGpus + ", running=" + running
                + ", queued=" + queued + ", limits=" + limits + '}';
    }
}
