package io.rlscheduler.master.internal.log;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.protocol.LogChunk;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One I/O thread ("rls-log-io-N") and the tasks that hash to it: their states, at most about
 * {@code maxCachedTasks} of them (least recently used idle states are dropped, and recovered from
 * their file when touched again), and their files. Every operation on a task runs on this thread,
 * in call order, so the states need no locks. Before each operation the task's file is compared
 * with what this master last wrote or read (one fstat), and read again if another master sharing
 * the directory changed it ({@link LogRecovery}).
 */
final class LogStripe {

    private static final Logger log = LoggerFactory.getLogger(LogStripe.class);

    /** An operation on this stripe, run on its I/O thread. */
    @FunctionalInterface
    interface Call<T> {
        T call(LogStripe stripe) throws IOException;
    }

    private final ThreadPoolExecutor executor;
    private final Path directory;
    private final int maxCachedTasks;
    private final LinkedHashMap<String, TaskLogState> states = new LinkedHashMap<>(64, 0.75f, true);
    private final LogFileWriter files;
    private final AttemptSequencer sequencer;
    private final LinePatience patience;
    private final LogDurability durability;
    private final RecordLookups lookups;

    LogStripe(int index, Path directory, int maxOpenFiles, int maxCachedTasks, AtomicInteger openFiles,
              LogDurability durability, TaskLogManager.RecordLookup recordLookup, LongSupplier lookupTimeoutMillis,
              long linePatienceNanos, LogUploads uploads, LogRestores restores, LogSizeLimit sizeLimit,
              LogEvents events) {
        this.executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                LogThreads.named("rls-log-io-" + index + "-"));
        this.directory = directory;
        this.maxCachedTasks = maxCachedTasks;
        this.files = new LogFileWriter(maxOpenFiles, openFiles);
        this.durability = durability;
        this.patience = new LinePatience(linePatienceNanos);
        this.sequencer = new AttemptSequencer(files, durability, patience, uploads, sizeLimit, events);
        this.lookups = new RecordLookups(recordLookup, lookupTimeoutMillis, executor, this::trim, restores, directory);
    }

    // ---- running operations (any thread) ------------------------------------------------------

    /**
     * Runs {@code call} on the I/O thread and completes the result with its value. It waits
     * behind a lookup of the task's record in flight; with {@code lookUpFirst}, a call on a task
     * the manager knows nothing of starts one.
     */
    <T> CompletableFuture<T> submit(String taskId, boolean lookUpFirst, Call<T> call) {
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            executor.execute(operation(taskId, lookUpFirst, call, result));
        } catch (RejectedExecutionException closing) {
            result.completeExceptionally(new IllegalStateException("the task log manager is closed"));
        }
        return result;
    }

    /** {@code call} as one operation on the I/O thread, completing {@code result} (see {@link #submit}). */
    <T> Runnable operation(String taskId, boolean lookUpFirst, Call<T> call, CompletableFuture<T> result) {
        return new Operation<>(taskId, lookUpFirst, call, result);
    }

    /** One operation on a task: parked while the task's record is looked up, then run, or refused. */
    private final class Operation<T> implements RecordLookups.Parked {
        private final String taskId;
        private final boolean lookUpFirst;
        private final Call<T> call;
        private final CompletableFuture<T> result;

        Operation(String taskId, boolean lookUpFirst, Call<T> call, CompletableFuture<T> result) {
            this.taskId = taskId;
            this.lookUpFirst = lookUpFirst;
            this.call = call;
            this.result = result;
        }

        @Override
        public void run() {
            if (lookups.parkIfLookingUp(taskId, this)) {
                return;
            }
            T value;
            try {
                if (lookUpFirst && lookUpFirst(taskId, this)) {
                    return;
                }
                value = call.call(LogStripe.this);
            } catch (IOException | RuntimeException e) {
                log.warn("task {}: log write failed: {}", taskId, e.toString());
                trim();
                result.completeExceptionally(e);
                return;
            }
            trim();
            result.complete(value);
        }

        @Override
        public void refuse(Throwable why) {
            result.completeExceptionally(why);
        }
    }

    /** Runs operations one after the other with one hand-off to the I/O thread; false once closed. */
    boolean runAll(List<Runnable> operations) {
        try {
            executor.execute(() -> operations.forEach(Runnable::run));
            return true;
        } catch (RejectedExecutionException closing) {
            return false;
        }
    }

    /** Attaches a new follower, from the file's start ({@link #subscribe}). */
    void follow(LogFollower follower) {
        onThread(follower, () -> {
            try {
                subscribe(follower);
            } catch (IOException e) {
                follower.terminate("cannot read the log file: " + e); // not thrown: its record lookup only ends followers
            }
        });
    }

    /** Attaches a follower again at the file's current end, once it has caught up with the file. */
    void reattach(LogFollower follower) {
        onThread(follower, () -> {
            TaskLogState st = stateOrTerminate(follower);
            if (st != null) {
                attach(follower, st);
            }
        });
    }

    /** Runs a follower's step, then {@link #trim}, on the I/O thread; once closed, ends the follower instead. */
    private void onThread(LogFollower follower, Runnable step) {
        try {
            executor.execute(() -> {
                step.run();
                trim();
            });
        } catch (RejectedExecutionException closing) {
            follower.terminate("the task log manager was closed");
        }
    }

    /** Removes a closed follower from its task's live followers. */
    void detach(LogFollower follower) {
        try {
            executor.execute(() -> {
                TaskLogState st = states.get(follower.getTaskId());
                if (st != null) {
                    st.followers.remove(follower);
                }
            });
        } catch (RejectedExecutionException closing) {
            // The states are gone with the manager.
        }
    }

    /** Returns the cached tasks whose started attempt has no end heard of ({@link TaskLogManager#unendedAttempts}). */
    CompletableFuture<List<String>> unended() {
        CompletableFuture<List<String>> result = new CompletableFuture<>();
        try {
            executor.execute(() -> {
                List<String> unended = new ArrayList<>();
                for (TaskLogState st : states.values()) {
                    if (!st.needsRecovery && awaitsEnd(st)) {
                        unended.add(st.taskId);
                    }
                }
                result.complete(unended);
            });
        } catch (RejectedExecutionException closing) {
            result.complete(List.of());
        }
        return result;
    }

    /** Returns the operations queued, not yet begun. */
    int backlog() {
        return executor.getQueue().size();
    }

    /** Lets the operations asked for finish, then writes what is pending, forces and closes the files, and stops. */
    void shutDown() {
        try {
            executor.execute(this::closeAll);
        } catch (RejectedExecutionException alreadyStopped) {
            // Nothing to flush.
        }
        executor.shutdown();
    }

    /** Waits for {@link #shutDown} to finish; returns whether the calling thread was interrupted. */
    boolean awaitTermination() {
        return LogThreads.awaitTermination(executor, "log writer");
    }

    // ---- operations (I/O thread) ---------------------------------------------------------------

    /**
     * Ends, incomplete, the attempts whose completion has waited for its last lines longer than
     * the patience. Queued on the I/O thread; returns at once.
     */
    void giveUpOverdue() {
        try {
            executor.execute(() -> {
                for (String taskId : patience.overdue(System.nanoTime())) {
                    if (!states.containsKey(taskId)) {
                        continue;
                    }
                    try {
                        // Through state(): another master sharing the directory may have ended it meanwhile.
                        sequencer.giveUp(state(taskId));
                    } catch (IOException e) {
                        log.warn("task {}: cannot end its log after its last lines did not come: {}", taskId, e.toString());
                    }
                }
                trim();
            });
        } catch (RejectedExecutionException stopping) {
            // closing: nothing more is waited for
        }
    }

    void open(String taskId, String traceId, long epoch, int attempt) throws IOException {
        sequencer.open(state(taskId), traceId, epoch, attempt);
    }

    TaskLogManager.Written append(String taskId, long epoch, long acknowledged, List<LogChunk> chunks)
            throws IOException {
        return sequencer.append(state(taskId), epoch, acknowledged, chunks);
    }

    void complete(String taskId, long epoch, long lastSequence, TaskState finalState) throws IOException {
        sequencer.complete(state(taskId), epoch, lastSequence, finalState);
    }

    void abandon(String taskId, TaskState finalState, String note) throws IOException {
        TaskLogState st = state(taskId);
        // A task the manager knew nothing of had its record looked up first (lookUpFirst): if
        // it ended silently (its log was on another master), that end is recorded by now and
        // nothing is written.
        if (lookups.isClosing() && st.knowsNothing() && !st.recordLookedUp) {
            return; // closing without the lookup: an end written now could contradict the record
        }
        sequencer.abandon(st, finalState, note);
    }

    TaskLogManager.Awaiting awaitsEnd(String taskId) throws IOException {
        TaskLogState st = state(taskId);
        return awaitsEnd(st) ? TaskLogManager.Awaiting.ATTEMPT_END
                : st.knowsNothing() ? TaskLogManager.Awaiting.NO_LOG_HERE : TaskLogManager.Awaiting.NOTHING;
    }

    private static boolean awaitsEnd(TaskLogState st) {
        return st.phase() == LogPhase.RUNNING && st.epoch() >= 0;
    }

    // ---- record lookups ------------------------------------------------------------------------

    /**
     * Before a batch, completion or abandon of a task the manager knows nothing of (no file, no
     * attempt in memory) and has not looked up since its state was created: asks the task's
     * record and parks {@code op}, with every later operation on the task, until the answer is
     * in. Returns whether it did (then {@code op} runs later).
     */
    private boolean lookUpFirst(String taskId, RecordLookups.Parked op) throws IOException {
        if (lookups.isClosing()) {
            return false;
        }
        TaskLogState cached = states.get(taskId);
        if (cached != null && !cached.needsRecovery && (!cached.knowsNothing() || cached.recordLookedUp)) {
            return false; // the usual case, without the file check of state(): the operation makes it
        }
        TaskLogState st = state(taskId);
        if (!st.knowsNothing() || st.recordLookedUp) {
            return false;
        }
        lookups.park(taskId, op);
        lookups.ask(taskId, "the log write", told -> recordLookedUp(taskId, told));
        return true;
    }

    /**
     * The record lookup answered for a batch, completion or abandon: starts the record's newest
     * attempt here, as an open would have (so that batches of older epochs are stale). If the
     * task ended with that attempt printing nothing, records that silent end instead (every
     * batch is then stale or beyond its last line) and ends the followers with it; if it ended
     * without its worker recording the end of its log, ends the attempt as an abandon does
     * (followers get the incomplete end, the file records it). A log brought back from the
     * artifact store is read instead: it holds the end. Then runs the parked operations; or, when
     * the task's log is in a store that cannot be read, refuses them, writing nothing that the
     * store's copy would contradict (the next operation looks the record up again).
     */
    private void recordLookedUp(String taskId, RecordLookups.Told told) {
        if (told.storeFailure() != null) {
            lookups.refuseParked(taskId, told.storeFailure());
            return;
        }
        try {
            if (told.restored()) {
                restored(taskId);
            }
            TaskLogState st = state(taskId);
            st.recordLookedUp = true;
            TaskLogManager.Recorded recorded = told.recorded();
            if (recorded != null && st.knowsNothing()) {
                LogRecord end = recorded.end();
                if (end != null && end.isComplete()) {
                    st.startAttempt(Math.max(recorded.epoch(), end.getEpoch()), end.getAttempt());
                    st.end(end, 0);
                    List<LogFollower> ending = new ArrayList<>(st.followers);
                    st.followers.clear();
                    for (LogFollower follower : ending) {
                        follower.end(end);
                    }
                } else if (recorded.epoch() >= 0) {
                    sequencer.startAttempt(st, recorded.epoch(), recorded.attempt(),
                            recorded.traceId() == null ? LogFileFormat.UNKNOWN_TRACE_ID : recorded.traceId());
                    if (end != null) {
                        sequencer.end(st, end.getFinalState(), false, "the task ended (" + end.getFinalState()
                                + ") without its worker recording where its log ends; the log may be incomplete");
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // The parked operations meet the same error and answer it.
            log.warn("task {}: cannot apply its record to its log state: {}", taskId, e.toString());
        } finally {
            lookups.runParked(taskId);
        }
    }

    /** The task's file was brought back from the artifact store: its cached state is read again from it. */
    private void restored(String taskId) {
        TaskLogState st = states.get(taskId);
        if (st != null) {
            st.needsRecovery = true;
        }
    }

    // ---- followers -----------------------------------------------------------------------------

    /**
     * A new follower: attached as {@link #reattach} does. If the task has no file and no attempt
     * known here, the record lookup is asked too whether the task ended without a log; if it did,
     * and nothing was written meanwhile, the follower is ended with the lookup's record.
     */
    private void subscribe(LogFollower follower) throws IOException {
        TaskLogState st = stateOrTerminate(follower);
        if (st == null) {
            return;
        }
        boolean lookUp = st.knowsNothing();
        attach(follower, st);
        if (lookUp) {
            lookups.ask(follower.getTaskId(), "follow", told -> lookedUp(follower, told));
        }
    }

    /**
     * The record lookup answered for a new follower: if the task ended without a log and nothing
     * came meanwhile, end the follower with the lookup's record; if its log came back from the
     * artifact store, read the state again from it (the follower replays it, then gets its end);
     * if that store cannot be read, end the follower with the store's error; else it stays
     * attached.
     */
    private void lookedUp(LogFollower follower, RecordLookups.Told told) {
        TaskLogState st = states.get(follower.getTaskId());
        // A state is dropped from the cache only without followers: then this one has ended or
        // was closed. One that needs recovery met an I/O error: its follower waits.
        if (st == null) {
            return;
        }
        if (told.restored()) {
            restored(st.taskId);
            stateOrTerminate(follower); // detaches the followers, which read the file and attach again
            return;
        }
        if (st.needsRecovery || !st.knowsNothing()) {
            return;
        }
        if (told.storeFailure() != null) {
            if (st.followers.remove(follower)) {
                follower.fail("the task's log ended where this master has no file of it, and the artifact store"
                        + " that holds it cannot be read: " + told.storeFailure(), told.storeFailure());
            }
            return;
        }
        LogRecord end = told.recorded() == null ? null : told.recorded().end();
        if (end != null && st.followers.remove(follower)) {
            follower.end(end);
        }
    }

    /** The follower's task state, or null after ending the follower if its file cannot be read. */
    private TaskLogState stateOrTerminate(LogFollower follower) {
        try {
            return state(follower.getTaskId());
        } catch (IOException e) {
            follower.terminate("cannot read the log file: " + e);
            return null;
        }
    }

    private void attach(LogFollower follower, TaskLogState st) {
        if (st.phase() == LogPhase.ENDED && durability.deferUntilForced(st.taskId, st.epoch(), follower, st.length)) {
            return; // the end is not on disk yet: the follower gets it once it is
        }
        if (follower.attach(st.length, st.endRecord())) {
            st.followers.add(follower);
        }
    }

    // ---- states --------------------------------------------------------------------------------

    private TaskLogState state(String taskId) throws IOException {
        TaskLogState st = states.get(taskId);
        if (st == null) {
            st = new TaskLogState(taskId, LogFileFormat.fileOf(directory, taskId));
            states.put(taskId, st);
        } else {
            files.touch(st);
        }
        if (!st.needsRecovery && changedOutside(st)) {
            log.info("task {}: log file {} changed outside this master ({} bytes, expected {}): another master"
                    + " sharing the directory wrote it; reading it again", taskId, st.path, files.size(st), st.length);
            st.needsRecovery = true;
        }
        if (st.needsRecovery) {
            files.close(st);
            LogRecovery.recover(st);
        }
        return st;
    }

    /**
     * Whether the file is not as long as this manager last wrote or read it: another master
     * sharing the log directory wrote to it meanwhile (this master lost the leadership and the
     * new leader carried the log on). Every operation then starts from the file as it is, not
     * from the cached state: a stale state would write lines twice, append lines of an older
     * epoch after a newer attempt's marker, or end an attempt a second time.
     */
    private boolean changedOutside(TaskLogState st) throws IOException {
        return files.size(st) != st.length + st.incompleteTail;
    }

    /** Runs on the I/O thread when the manager closes, after every operation asked before. */
    private void closeAll() {
        lookups.close();
        for (TaskLogState st : states.values()) {
            if (st.marker != null && st.phase() != LogPhase.ENDED) {
                sequencer.writePendingMarker(st); // as when dropped from the cache: the file outlives the state
            }
            files.force(st);
            files.close(st);
        }
        states.clear();
    }

    /**
     * Closes the least recently used files, and drops the least recently used idle states, over
     * the limits. Runs after every operation, so it must not walk the states: files are closed
     * from the front of their own LRU order, and states dropped from the front of theirs
     * (skipping only the few that are followed or wait for lines).
     */
    private void trim() {
        files.trim();
        if (states.size() <= maxCachedTasks) {
            return;
        }
        for (Iterator<TaskLogState> it = states.values().iterator(); it.hasNext() && states.size() > maxCachedTasks;) {
            TaskLogState st = it.next();
            if (st.isEvictable()) {
                if (st.marker != null && st.phase() != LogPhase.ENDED) {
                    sequencer.writePendingMarker(st);
                }
                files.close(st);
                it.remove();
            }
        }
    }
}
