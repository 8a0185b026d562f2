package io.rlscheduler.master;

import io.rlscheduler.core.OwnerLimits;
import io.rlscheduler.core.OwnerShare;
import io.rlscheduler.core.internal.OwnerRecords;
import java.time.Duration;
import java.util.List;
import java.util.Objects;

/** {@link Sharing} of a master, over the core's {@link OwnerRecords}. Thread-safe. */
final class MasterSharing implements Sharing {

    private final OwnerRecords records;
    private final io.rlscheduler.master.internal.SharingRepair repair;
    private final MasterHealth.Await await;

    MasterSharing(OwnerRecords records, io.rlscheduler.master.internal.SharingRepair repair, MasterHealth.Await await) {
        this.records = records;
        this.repair = repair;
        this.await = await;
    }

    @Override
    public List<io.rlscheduler.core.SharingCorrection> repair() {
        return await.await(repair.run()).corrections();
    }

    @Override
    public void setLimits(String owner, OwnerLimits limits) {
        await.await(records.setLimits(owner, Objects.requireNonNull(limits, "limits")));
    }

    @Override
    public OwnerLimits getLimits(String owner) {
        return await.await(records.limits(owner));
    }

    @Override
    public void setDefaults(OwnerLimits defaults) {
        await.await(records.setDefaults(Objects.requireNonNull(defaults, "defaults")));
    }

    @Override
    public OwnerLimits getDefaults() {
        return await.await(records.defaults());
    }

    @Override
    public void setHalfLife(Duration halfLife) {
        await.await(records.setFairShare(Objects.requireNonNull(halfLife, "halfLife"), null));
    }

    @Override
    public void setMinimumCharge(Duration charge) {
        await.await(records.setFairShare(null, Objects.requireNonNull(charge, "charge")));
    }

    @Override
    public Duration getHalfLife() {
        return await.await(records.shares()).getHalfLife();
    }

    @Override
    public void setReserveAfter(Duration reserveAfter) {
        await.await(records.setFairShare(null, null, Objects.requireNonNull(reserveAfter, "reserveAfter")));
    }

    @Override
    public Duration getReserveAfter() {
        return await.await(records.shares()).getReserveAfter();
    }

    @Override
    public List<io.rlscheduler.core.Reservation> reservations() {
        return await.await(records.shares()).getReservations();
    }

    @Override
    public List<OwnerShare> shares() {
        return await.await(records.shares()).getOwners();
    }
}
