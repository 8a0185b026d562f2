package io.rlscheduler.master.internal;

import io.rlscheduler.core.internal.HolderReads;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Who holds each task's current attempt, as far as this master knows: what its dispatcher
 * assigned (worker id and session, per task and epoch), and what it read from task records for
 * the attempts it did not assign (another master led when they were claimed). A worker's
 * task-scoped frame is checked here before anything of it is written: the holder's own frames
 * cost a map read, and only an attempt this master does not know costs one read of the record.
 *
 * <p>An entry is dropped as soon as its holder has nothing more to send: its acknowledgement was
 * admitted and the attempt's log ended complete ({@link #acknowledged}, {@link #logEnded}), which
 * for most attempts is shortly after the task's end, so the map holds about the attempts in
 * flight. Otherwise it is kept while it is used; one not used for {@link #IDLE_MILLIS}, and one of
 * an ended task {@link #ENDED_MILLIS} after its end, is dropped by {@link #sweep()}. A later frame
 * of a dropped attempt reads the record again. Thread-safe.
 */
public final class AttemptHolders {

    /** How long an entry no frame used is kept: {@value} ms. */
    static final long IDLE_MILLIS = TimeUnit.MINUTES.toMillis(10);
    /** How long the entry of an ended task is kept after its end, for its last lines: {@value} ms. */
    static final long ENDED_MILLIS = TimeUnit.MINUTES.toMillis(1);

    /** What a frame's sender is to the attempt it names. */
    public enum Verdict {
        /** It holds the attempt (or held it, for an attempt that ended and was not taken by another). */
        HOLDER,
        /** Another worker or session holds it, or no such attempt was ever assigned. */
        NOT_HOLDER,
        /** The epoch is older than the task's current one, or the attempt was taken back. */
        STALE,
        /** No task has that id. */
        UNKNOWN_TASK
    }

    private static final CompletableFuture<Verdict> UNKNOWN = CompletableFuture.completedFuture(Verdict.UNKNOWN_TASK);

    /** An entry's flag: its holder's acknowledgement was admitted. */
    private static final int ACKNOWLEDGED = 1;
    /** An entry's flag: the attempt's log ended. */
    private static final int LOG_ENDED = 2;
    /** Both flags: nothing more is expected of the holder. */
    private static final int DONE = ACKNOWLEDGED | LOG_ENDED;

    private static final class Entry {
        static final AtomicIntegerFieldUpdater<Entry> SEEN = AtomicIntegerFieldUpdater.newUpdater(Entry.class, "seen");

        final long epoch;
        final String workerId;
        final String sessionId;
        volatile long usedAtMillis;
        volatile long endedAtMillis;
        /** {@link #ACKNOWLEDGED} and {@link #LOG_ENDED}, as they happen. */
        volatile int seen;

        Entry(long epoch, String workerId, String sessionId, long now) {
            this.epoch = epoch;
            this.workerId = workerId;
            this.sessionId = sessionId;
            this.usedAtMillis = now;
        }
    }

    private final ConcurrentHashMap<String, Entry> entries = new ConcurrentHashMap<>();
    private final Function<String, CompletableFuture<Optional<HolderReads.Holder>>> records;
    private final LongSupplier clock;
    private final AtomicLong lookups = new AtomicLong();

    /** @param records reads a task's record (the lease core's {@link HolderReads#of}) */
    public AttemptHolders(Function<String, CompletableFuture<Optional<HolderReads.Holder>>> records) {
        this(records, System::currentTimeMillis);
    }

    AttemptHolders(Function<String, CompletableFuture<Optional<HolderReads.Holder>>> records, LongSupplier clock) {
        this.records = records;
        this.clock = clock;
    }

    /** Records that this master assigned the attempt to the worker's session. */
    public void assigned(String taskId, long epoch, String workerId, String sessionId) {
        entries.merge(taskId, new Entry(epoch, workerId, sessionId, clock.getAsLong()),
                (old, fresh) -> fresh.epoch >= old.epoch ? fresh : old);
    }

    /** Records that the task ended: its entry is dropped a while later. */
    public void ended(String taskId) {
        Entry e = entries.get(taskId);
        if (e != null) {
            e.endedAtMillis = clock.getAsLong();
        }
    }

    /** The holder's acknowledgement of the attempt was admitted: no other is expected. */
    public void acknowledged(String taskId, long epoch) {
        see(taskId, epoch, ACKNOWLEDGED);
    }

    /** The attempt's log ended complete: the holder sends no more lines of it. Any thread. */
    public void logEnded(String taskId, long epoch) {
        see(taskId, epoch, LOG_ENDED);
    }

    /** Notes what happened to the attempt; once both have, its entry is dropped. */
    private void see(String taskId, long epoch, int flag) {
        Entry e = entries.get(taskId);
        if (e == null || e.epoch != epoch) {
            return;
        }
        int was = Entry.SEEN.getAndAccumulate(e, flag, (seen, f) -> seen | f);
        if (was != DONE && (was | flag) == DONE) {
            entries.remove(taskId, e);
        }
    }

    /**
     * The verdict from what this master knows, or null when the record must be read
     * ({@link #lookUp}): the task is not known here, or the epoch is newer than the one known.
     */
    public Verdict known(String taskId, long epoch, String workerId, String sessionId) {
        Entry e = entries.get(taskId);
        if (e == null || epoch > e.epoch) {
            return null;
        }
        if (epoch < e.epoch) {
            return Verdict.STALE;
        }
        if (e.workerId.isEmpty()) {
            return Verdict.STALE;
        }
        if (!e.workerId.equals(workerId) || !e.sessionId.equals(sessionId)) {
            return Verdict.NOT_HOLDER;
        }
        e.usedAtMillis = clock.getAsLong();
        return Verdict.HOLDER;
    }

    /**
     * Reads the task's record, keeps what it says, and answers the verdict for the frame. Fails
     * as the read does (Redis away): the caller writes nothing and asks for the frame again later.
     */
    public CompletableFuture<Verdict> lookUp(String taskId, long epoch, String workerId, String sessionId) {
        lookups.incrementAndGet();
        CompletableFuture<Optional<HolderReads.Holder>> read;
        try {
            read = records.apply(taskId);
        } catch (IllegalArgumentException invalid) {
            return UNKNOWN;
        }
        return read.thenApply(found -> {
            if (found.isEmpty()) {
                return Verdict.UNKNOWN_TASK;
            }
            HolderReads.Holder h = found.get();
            if (h.attempt() > 0) {
                Entry fresh = new Entry(h.epoch(), h.workerId(), h.sessionId(), clock.getAsLong());
                if (h.state().isTerminal()) {
                    fresh.endedAtMillis = fresh.usedAtMillis;
                }
                entries.merge(taskId, fresh, (old, f) -> f.epoch > old.epoch ? f : old);
            }
            Verdict v = known(taskId, epoch, workerId, sessionId);
            // A task never claimed, or an epoch beyond the record's: no such attempt was assigned.
            return v == null ? Verdict.NOT_HOLDER : v;
        });
    }

    /** Drops the entries not used for a while and those of tasks that ended a while ago. */
    public void sweep() {
        long now = clock.getAsLong();
        entries.values().removeIf(e -> now - e.usedAtMillis > IDLE_MILLIS
                || (e.endedAtMillis != 0 && now - e.endedAtMillis > ENDED_MILLIS));
    }

    /** Returns how many attempts are known. */
    public int size() {
        return entries.size();
    }

    /** Returns how many records were read for frames of attempts not known here. */
    public long lookups() {
        return lookups.get();
    }
}
