package io.rlscheduler.master.internal.log;

import com.google.protobuf.ByteString;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.store.ArtifactStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;

/**
 * The master's task log files: writes each task's output lines, exactly once and in order, to
 * {@code <dir>/<taskId>.log} ({@link LogFileFormat}), and serves followers that read a log from
 * its start and then live. The façade of the package: it checks its arguments on the caller's
 * thread and hands each call to the task's I/O thread ({@link LogStripe}).
 *
 * <p>Every method returns at once and does no file I/O on the caller's thread, so Netty event
 * loops may call it. Tasks are spread over {@link Limits#ioThreads()} I/O threads by task id;
 * each task's calls run on its thread in call order. Futures complete on that thread: dependent
 * stages must be short and must not block (a Netty {@code writeAndFlush} is fine). Data is
 * written to the OS before a future completes; a file is forced to disk once its attempt has
 * ended, before its followers get their END_OF_STREAM ({@link LogDurability}), and when the
 * manager closes, not per batch. The package documentation says how each mechanism works.
 *
 * <p>With an artifact store, a log that ends while this master leads is copied into it whole
 * ({@code LogUploads}, retried while the store refuses), and the log of a task that ended where this master has no file of it
 * is brought back from it before anything else is done with that task ({@code LogRestores}): so
 * any master serves the whole log of an ended run, whichever master wrote it.
 *
 * <p>A task's file holds at most {@link Limits#maxLogBytes()} before it is cut ({@code LogSizeLimit}):
 * later lines are acknowledged and dropped ({@link Written#cut()}), and {@link LogEvents} tells of
 * the cut as of every attempt's end.
 *
 * <p>Thread-safe. {@link #close()} flushes and closes the files, ends all followers and stops the
 * threads.
 */
public final class TaskLogManager implements AutoCloseable {

    /** The trace id written to a file whose attempt was not started by {@link #open} (a log batch or an end came first). */
    public static final String UNKNOWN_TRACE_ID = LogFileFormat.UNKNOWN_TRACE_ID;

    /**
     * How long a record lookup may take before the operations waiting for it go on as if it told
     * nothing (a batch is then written, as without a lookup): a Redis stall must not hold a task's
     * log up for the client's whole command timeout.
     */
    private static final long LOOKUP_TIMEOUT_MILLIS = 5_000;

    /**
     * Sizes of a manager.
     *
     * @param ioThreads             threads that write files; tasks are spread over them by id
     * @param maxOpenFiles          files kept open for appending, in all
     * @param maxCachedTasks        task states kept in memory, in all (beyond those that are
     *                              followed or have a completion pending)
     * @param followerQueueCapacity live lines one follower may have waiting before it falls back
     *                              to reading the file
     * @param syncThreads           threads that force the files of ended attempts to disk; tasks
     *                              are spread over them by id. They mostly wait for the disk, and
     *                              a journaling file system commits concurrent forces together,
     *                              so more than one raises the rate of forces a disk sustains
     * @param linePatience          how long a completion ({@link #complete}) waits for the
     *                              attempt's lines it lacks before the attempt ends with those it
     *                              has, marked incomplete (its worker died before sending them)
     * @param maxLogBytes           the most bytes of a task's log file, over all its attempts,
     *                              before it is cut: the output line that would take it past this
     *                              and every later one are not written (acknowledged all the same),
     *                              and a cut marker says so (see {@link LogFileFormat})
     */
    public record Limits(int ioThreads, int maxOpenFiles, int maxCachedTasks, int followerQueueCapacity,
                         int syncThreads, Duration linePatience, long maxLogBytes) {

        /** Default number of sync threads: {@value}. */
        public static final int DEFAULT_SYNC_THREADS = 4;
        /** Default patience for an attempt's missing last lines: 4 minutes, twice the default task lease. */
        public static final Duration DEFAULT_LINE_PATIENCE = Duration.ofMinutes(4);
        /** Default most bytes of one task's log file: 4 GiB. */
        public static final long DEFAULT_MAX_LOG_BYTES = 4L << 30;

        /** Checks that each limit is positive. */
        public Limits {
            requirePositive(ioThreads, "ioThreads");
            requirePositive(maxOpenFiles, "maxOpenFiles");
            requirePositive(maxCachedTasks, "maxCachedTasks");
            requirePositive(followerQueueCapacity, "followerQueueCapacity");
            requirePositive(syncThreads, "syncThreads");
            Objects.requireNonNull(linePatience, "linePatience");
            if (linePatience.isNegative() || linePatience.isZero()) {
                throw new IllegalArgumentException("linePatience must be positive, was " + linePatience);
            }
            if (maxLogBytes <= 0) {
                throw new IllegalArgumentException("maxLogBytes must be positive, was " + maxLogBytes);
            }
        }

        /** Limits with the default most bytes per task's log, {@link #DEFAULT_MAX_LOG_BYTES}. */
        public Limits(int ioThreads, int maxOpenFiles, int maxCachedTasks, int followerQueueCapacity, int syncThreads,
                      Duration linePatience) {
            this(ioThreads, maxOpenFiles, maxCachedTasks, followerQueueCapacity, syncThreads, linePatience,
                    DEFAULT_MAX_LOG_BYTES);
        }

        /** Limits with the default patience for missing lines, {@link #DEFAULT_LINE_PATIENCE}. */
        public Limits(int ioThreads, int maxOpenFiles, int maxCachedTasks, int followerQueueCapacity, int syncThreads) {
            this(ioThreads, maxOpenFiles, maxCachedTasks, followerQueueCapacity, syncThreads, DEFAULT_LINE_PATIENCE);
        }

        /** Returns these limits with another patience for an attempt's missing last lines. */
        public Limits withLinePatience(Duration patience) {
            return new Limits(ioThreads, maxOpenFiles, maxCachedTasks, followerQueueCapacity, syncThreads, patience,
                    maxLogBytes);
        }

        /** Returns these limits with another most bytes per task's log file. */
        public Limits withMaxLogBytes(long bytes) {
            return new Limits(ioThreads, maxOpenFiles, maxCachedTasks, followerQueueCapacity, syncThreads, linePatience,
                    bytes);
        }

        /** Limits with the default number of sync threads, {@value #DEFAULT_SYNC_THREADS}. */
        public Limits(int ioThreads, int maxOpenFiles, int maxCachedTasks, int followerQueueCapacity) {
            this(ioThreads, maxOpenFiles, maxCachedTasks, followerQueueCapacity, DEFAULT_SYNC_THREADS);
        }

        /**
         * Returns the defaults: half the processors as I/O threads (1 to 4), 256 open files,
         * 4096 cached tasks, 4096 queued lines per follower, 4 sync threads, 4 GiB per task's log.
         */
        public static Limits defaults() {
            int threads = Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors() / 2));
            return new Limits(threads, 256, 4096, 4096, DEFAULT_SYNC_THREADS);
        }

        private static void requirePositive(int value, String name) {
            if (value <= 0) {
                throw new IllegalArgumentException(name + " must be positive, was " + value);
            }
        }
    }

    private final Path directory;
    private final Limits limits;
    private final LogStripes stripes;
    private final LogUploads uploads;
    private final LogRestores restores;
    private final LogSizeLimit sizeLimit;
    private volatile long lookupTimeoutMillis = LOOKUP_TIMEOUT_MILLIS;
    private final Set<LogFollower> followers = ConcurrentHashMap.newKeySet();

    /**
     * Creates a manager with the {@linkplain Limits#defaults() default limits}.
     *
     * @param directory where the log files are; created if missing (on the calling thread)
     * @throws UncheckedIOException if the directory cannot be created
     */
    public TaskLogManager(Path directory) {
        this(directory, Limits.defaults());
    }

    /**
     * Creates a manager.
     *
     * @param directory where the log files are; created if missing (on the calling thread)
     * @param limits    its sizes
     * @throws UncheckedIOException if the directory cannot be created
     */
    public TaskLogManager(Path directory, Limits limits) {
        this(directory, limits, RecordLookup.NONE);
    }

    /**
     * Creates a manager that asks {@code recordLookup} about tasks it holds neither a file nor a
     * state for (see {@link RecordLookup}).
     *
     * @param directory    where the log files are; created if missing (on the calling thread)
     * @param limits       its sizes
     * @param recordLookup asked when a follower subscribes to, a batch or completion arrives for,
     *                     or an abandon is asked of a task of which the manager has neither a file
     *                     nor an attempt in memory
     * @throws UncheckedIOException if the directory cannot be created
     */
    public TaskLogManager(Path directory, Limits limits, RecordLookup recordLookup) {
        this(directory, limits, LogDurability::force, recordLookup, null, () -> false, LogEvents.NONE);
    }

    /**
     * Creates a manager that copies ended logs into {@code store} and brings them back from it
     * (see the class comment). The store is used from the manager's own threads only, and not
     * closed by the manager.
     *
     * @param directory    where the log files are; created if missing (on the calling thread)
     * @param limits       its sizes
     * @param recordLookup as {@link #TaskLogManager(Path, Limits, RecordLookup)}: it also tells
     *                     which tasks ended, whose logs the store may hold
     * @param store        the artifact store; null for none
     * @param leading      whether this master leads now (read when an end is written; must not
     *                     block): only the leader's ends are uploaded. Workers send their lines
     *                     to the leader, so its file is the run's log; the end another master
     *                     writes (an abandon every master hears of, an end deferred past the
     *                     leader's) is of a file that may lack them, and must not replace it
     * @throws UncheckedIOException if the directory cannot be created
     */
    public TaskLogManager(Path directory, Limits limits, RecordLookup recordLookup, ArtifactStore store,
                          BooleanSupplier leading) {
        this(directory, limits, recordLookup, store, leading, LogEvents.NONE);
    }

    /**
     * As {@link #TaskLogManager(Path, Limits, RecordLookup, ArtifactStore, BooleanSupplier)},
     * telling {@code events} of attempts' ends and logs' cuts as they happen.
     */
    public TaskLogManager(Path directory, Limits limits, RecordLookup recordLookup, ArtifactStore store,
                          BooleanSupplier leading, LogEvents events) {
        this(directory, limits, LogDurability::force, recordLookup, store, leading, events);
    }

    /** Forces a file's data to disk. A seam for tests, which need to hold a force up. */
    @FunctionalInterface
    interface FileForcer {
        void force(Path file) throws IOException;
    }

    /**
     * What a task's record tells the log manager about a task it holds neither a state nor a file
     * for (dropped from the cache, a restarted or standby master): an attempt that ends complete
     * without printing a line leaves no file, and an attempt the master started before it
     * restarted is not known here. The master answers from Redis ({@code SchedulerMaster}).
     * Followers of such a task learn from it whether the task ended with nothing to come; a log
     * batch or completion for it waits for the answer, so that one of an attempt older than the
     * record's newest is stale, as it is for a task whose state is cached.
     */
    @FunctionalInterface
    public interface RecordLookup {

        /** Knows nothing: followers of a task without a file wait for its log, and its batches are written. */
        RecordLookup NONE = taskId -> CompletableFuture.completedFuture(null);

        /**
         * Looks a task's record up. Called on a log I/O thread: must return at once.
         *
         * @param taskId the task
         * @return completed with what the record tells, or with null when there is no record; a
         *         failure counts as null
         */
        CompletableFuture<Recorded> lookUp(String taskId);
    }

    /**
     * What a task record tells the log manager ({@link RecordLookup}).
     *
     * @param epoch   the epoch of the task's newest attempt; -1 when it never started one
     * @param attempt that attempt's number; 0 when none
     * @param traceId the task's trace id, for the first line of a file; may be null
     * @param end     the END_OF_STREAM record to give a follower of a task that has no log file,
     *                when the task has ended and none of its lines is on its way; null when it may
     *                still write to its log (not ended, or ended with lines not yet written). A
     *                complete one means the newest attempt ended without printing a line.
     * @param ended   whether the task has ended (its state is final): a log it printed lines to
     *                has ended on some master, and is in the artifact store once uploaded
     */
    public record Recorded(long epoch, int attempt, String traceId, LogRecord end, boolean ended) {

        /** What a record tells, the task taken as ended exactly when {@code end} is given. */
        public Recorded(long epoch, int attempt, String traceId, LogRecord end) {
            this(epoch, attempt, traceId, end, end != null);
        }
    }

    /** As {@link #TaskLogManager(Path, Limits)}, forcing files with {@code forcer}. */
    TaskLogManager(Path directory, Limits limits, FileForcer forcer) {
        this(directory, limits, forcer, RecordLookup.NONE, null, () -> false, LogEvents.NONE);
    }

    /** As {@link #TaskLogManager(Path, Limits, RecordLookup)}, forcing files with {@code forcer}. */
    TaskLogManager(Path directory, Limits limits, FileForcer forcer, RecordLookup recordLookup) {
        this(directory, limits, forcer, recordLookup, null, () -> false, LogEvents.NONE);
    }

    /** As {@link #TaskLogManager(Path, Limits, RecordLookup, ArtifactStore, BooleanSupplier, LogEvents)}, forcing files with {@code forcer}. */
    TaskLogManager(Path directory, Limits limits, FileForcer forcer, RecordLookup recordLookup, ArtifactStore store,
                   BooleanSupplier leading, LogEvents events) {
        this.limits = Objects.requireNonNull(limits, "limits");
        Objects.requireNonNull(forcer, "forcer");
        Objects.requireNonNull(recordLookup, "recordLookup");
        try {
            this.directory = Files.createDirectories(Objects.requireNonNull(directory, "directory"))
                    .toAbsolutePath().normalize();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the task log directory " + directory, e);
        }
        this.uploads = new LogUploads(store, Objects.requireNonNull(leading, "leading"));
        this.restores = new LogRestores(store);
        this.sizeLimit = new LogSizeLimit(limits.maxLogBytes(), Objects.requireNonNull(events, "events"));
        this.stripes = new LogStripes(this.directory, limits, forcer, recordLookup, () -> lookupTimeoutMillis, uploads,
                restores, sizeLimit, events);
    }

    /** Returns the directory of the log files (absolute). */
    public Path getDirectory() {
        return directory;
    }

    /** Returns the limits this manager was created with. */
    public Limits getLimits() {
        return limits;
    }

    /**
     * Returns the log file of a task, {@code <dir>/<taskId>.log}. Touches no file.
     *
     * @throws IllegalArgumentException if {@code taskId} is not a valid task id
     */
    public Path pathOf(String taskId) {
        return LogFileFormat.fileOf(directory, taskId);
    }

    /**
     * Starts an attempt's log. Its marker, and a new file's first line {@code TRACE_ID:<traceId>},
     * go to the file with the attempt's first output line or its end: this call reads an existing
     * file's state but writes nothing. A second call for the same epoch, or one for an epoch
     * older than the task's current one, changes nothing. An existing file keeps its first line,
     * and an attempt already started by a log batch its marker with {@code attempt=0}. Returns at
     * once.
     *
     * @param taskId  the task
     * @param traceId the task's trace id; CR and LF in it become spaces
     * @param epoch   the attempt's lease epoch, not negative
     * @param attempt the attempt number (from 1), not negative
     * @return completed when the attempt is recorded; fails with the IOException if an existing
     *         file cannot be read, or IllegalStateException once closed
     * @throws IllegalArgumentException if {@code taskId} is not a valid task id (nothing is
     *                                  written), or epoch or attempt is negative
     */
    public CompletableFuture<Void> open(String taskId, String traceId, long epoch, int attempt) {
        pathOf(taskId);
        Objects.requireNonNull(traceId, "traceId");
        requireNotNegative(epoch, "epoch");
        requireNotNegative(attempt, "attempt");
        return stripes.submit(taskId, false, stripe -> {
            stripe.open(taskId, traceId, epoch, attempt);
            return null;
        });
    }

    /** An attempt being dispatched, for {@link #openAll}: the arguments of {@link #open}. */
    public record AttemptStart(String taskId, String traceId, long epoch, int attempt) {
    }

    /**
     * Starts the logs of several attempts, each as {@link #open} does, with one hand-off to each
     * I/O thread concerned instead of one per attempt (a dispatch round starts dozens). Returns at
     * once; a start that fails is logged, as nothing waits for it. Checks every start before any
     * is made.
     *
     * @param starts the attempts
     * @throws IllegalArgumentException as {@link #open}, for any of them
     */
    public void openAll(List<AttemptStart> starts) {
        for (AttemptStart start : starts) {
            pathOf(start.taskId());
            Objects.requireNonNull(start.traceId(), "traceId");
            requireNotNegative(start.epoch(), "epoch");
            requireNotNegative(start.attempt(), "attempt");
        }
        stripes.openAll(starts);
    }

    /**
     * Writes a batch of a task's output lines, given as chunks (runs of consecutive lines, each
     * ended by LF), exactly once and in order, line by line inside a chunk too: lines already
     * written are skipped, a line beyond the next is a gap and ends the batch there, a batch of an
     * older epoch is stale and one of a newer epoch starts that attempt. A CR inside a line is
     * written as a space. Returns at once; the bytes are handled on the task's I/O thread.
     *
     * @param taskId the task (as received from a worker: it is checked)
     * @param epoch  the batch's lease epoch
     * @param chunks the chunks, in ascending sequence order
     * @return completed, once the new lines are written to the OS, with the highest contiguous
     *         sequence number of the epoch written (the value to acknowledge; 0 when none), or -1
     *         when the epoch is older than the task's current one (stale; nothing written). Fails
     *         with IllegalArgumentException for an invalid task id, a negative epoch or a malformed
     *         chunk (sequence number 0, no line, or text not ending with LF; nothing of the batch
     *         is written), the IOException if the file cannot be written, IllegalStateException
     *         once closed
     */
    public CompletableFuture<Long> appendChunks(String taskId, long epoch, List<LogChunk> chunks) {
        return write(taskId, epoch, chunks).thenApply(Written::acked);
    }

    /**
     * What a batch came to: the value to acknowledge (as {@link #appendChunks} returns it),
     * whether the batch holds lines beyond a gap, i.e. lines before them that the attempt's log
     * would take are missing (the sender must resend what it has after {@code acked}), and
     * whether the task's log is cut at its size limit ({@link Limits#maxLogBytes()}): then
     * {@code acked} covers every line of the batch, written or not, and no later line of the task
     * is written. Never a gap for a stale batch, an ended attempt, a cut log, or lines beyond the
     * attempt's last.
     */
    public record Written(long acked, boolean gap, boolean cut) {

        /** What a batch of a log that is not cut came to. */
        public Written(long acked, boolean gap) {
            this(acked, gap, false);
        }
    }

    /**
     * As {@link #appendChunks}, telling also whether the batch met a gap ({@link Written}).
     *
     * @param taskId the task (as received from a worker: it is checked)
     * @param epoch  the batch's lease epoch
     * @param chunks the chunks, in ascending sequence order
     * @return as {@link #appendChunks}, with the gap flag
     */
    public CompletableFuture<Written> write(String taskId, long epoch, List<LogChunk> chunks) {
        return write(taskId, epoch, 0, chunks);
    }

    /**
     * As {@link #write(String, long, List)}, from a worker that says it no longer has the lines up
     * to {@code acknowledged} (some master acknowledged them). If this log lacks some of them (that
     * master did not share this directory, or the file lost what the OS had not yet written), they
     * cannot come any more: the log goes on after them, and the file records where with an attempt
     * marker {@code after=<acknowledged>} (see {@link LogFileFormat}); a warning names the lines.
     *
     * @param acknowledged the highest sequence number the worker was acknowledged, 0 if none or unknown
     */
    public CompletableFuture<Written> write(String taskId, long epoch, long acknowledged, List<LogChunk> chunks) {
        try {
            requireNotNegative(acknowledged, "acknowledged");
            pathOf(taskId);
            requireNotNegative(epoch, "epoch");
            Objects.requireNonNull(chunks, "chunks");
            for (LogChunk chunk : chunks) {
                requireWellFormed(chunk);
            }
        } catch (RuntimeException invalid) {
            return CompletableFuture.failedFuture(invalid);
        }
        return stripes.submit(taskId, true, stripe -> stripe.append(taskId, epoch, acknowledged, chunks));
    }

    /**
     * Records that an attempt ended, as its worker recorded in Redis with the line its log ends
     * at. Once every line up to {@code lastSequence} is written (now, or when the missing lines
     * arrive), the end is written to the file ({@code RLS_END}) and the file closed; once it is
     * forced to disk, followers get END_OF_STREAM with {@code finalState}, marked complete. Lines
     * above {@code lastSequence} are not written afterwards. If the missing lines have not come
     * within {@link Limits#linePatience()} (the worker died before sending them), the attempt
     * ends with the lines it has, marked incomplete. Stale epochs are ignored, and so is a call
     * once the attempt ended. Returns at once.
     *
     * @param taskId       the task
     * @param epoch        the attempt's lease epoch
     * @param lastSequence the attempt's last sequence number (0: it printed nothing)
     * @param finalState   the state it ended in, e.g. {@link TaskState#SUCCEEDED}; must not be null
     * @throws IllegalArgumentException if {@code taskId} is not a valid task id, or a number is negative
     */
    public void complete(String taskId, long epoch, long lastSequence, TaskState finalState) {
        pathOf(taskId);
        requireNotNegative(epoch, "epoch");
        requireNotNegative(lastSequence, "lastSequence");
        Objects.requireNonNull(finalState, "finalState");
        stripes.run(taskId, "complete", true, stripe -> stripe.complete(taskId, epoch, lastSequence, finalState));
    }

    /**
     * Records that a task ended without its worker recording the end of its log (failed by the
     * reaper, cancelled while its worker was gone): followers get END_OF_STREAM with
     * {@code finalState} (after the lines already written, and once the file is forced to disk),
     * marked incomplete with a note naming {@code reason}; the end is written to the file, so later
     * followers get the same. Lines that still arrive for the attempt are written. Ignored if the
     * current attempt already ended. Returns at once.
     *
     * @param taskId     the task
     * @param finalState the state it ended in, e.g. {@link TaskState#FAILED}; must not be null
     * @param reason     why, for the note; may be null
     * @throws IllegalArgumentException if {@code taskId} is not a valid task id
     */
    public void abandon(String taskId, TaskState finalState, String reason) {
        pathOf(taskId);
        Objects.requireNonNull(finalState, "finalState");
        String note = "the task ended without its worker recording where its log ends; the log may be incomplete"
                + (reason == null || reason.isBlank() ? "" : ": " + reason);
        stripes.run(taskId, "abandon", true, stripe -> stripe.abandon(taskId, finalState, note));
    }

    /**
     * Follows a task's log: {@code consumer} receives every output line in the file, attempt
     * after attempt, then the lines written from then on, without gap or duplicate, then exactly
     * one END_OF_STREAM record: when the current attempt ends ({@link #complete}, {@link #abandon}),
     * at once after the replay if it has already ended, or when the follow or the manager is
     * closed. A task without a log yet is waited for, unless the {@link RecordLookup} says it ended
     * without one. The consumer runs on a delivery thread ("rls-log-follow-N"), never concurrently
     * with itself: a slow or blocked consumer holds up only its own follow, which falls back to
     * reading the file and loses no line. Returns at once.
     *
     * @param taskId   the task
     * @param consumer receives the records; exceptions it throws are logged and delivery goes on
     * @return the follow, to close it or wait for its end
     * @throws IllegalArgumentException if {@code taskId} is not a valid task id
     * @throws IllegalStateException    if the manager is closed
     */
    public LogFollow follow(String taskId, Consumer<LogRecord> consumer) {
        Path path = pathOf(taskId);
        Objects.requireNonNull(consumer, "consumer");
        if (stripes.isClosed()) {
            throw new IllegalStateException("the task log manager is closed");
        }
        LogStripe stripe = stripes.of(taskId);
        LogFollower follower = new LogFollower(taskId, path, consumer, limits.followerQueueCapacity(),
                stripes.delivery(), stripe, followers::remove);
        followers.add(follower);
        stripe.follow(follower);
        return follower;
    }

    /**
     * Returns the tasks whose log state is in the cache with an attempt started, not ended, and no
     * completion waiting for its last lines: those whose end this
     * manager has not heard of. A state dropped from the cache is not among them (a task with
     * followers is never dropped). For a master that may have missed the events of tasks' ends.
     * Returns at once; completes on the I/O threads.
     */
    public CompletableFuture<List<String>> unendedAttempts() {
        return stripes.unended();
    }

    /** What a task's log waits for, from {@link #awaitsEnd}. */
    public enum Awaiting {
        /** Nothing: its attempt ended, or a completion waits for its last lines. */
        NOTHING,
        /** The end of a started attempt (see {@link #unendedAttempts()}). */
        ATTEMPT_END,
        /** Everything: no file and no attempt here (a follower waits unless the record says no line is coming). */
        NO_LOG_HERE
    }

    /**
     * Returns what the task's log waits to hear. Reads the file if the task's state is not cached.
     * Returns at once; completes on the task's I/O thread, with {@link Awaiting#NOTHING} for an
     * invalid id or a closed manager.
     */
    public CompletableFuture<Awaiting> awaitsEnd(String taskId) {
        if (!TaskIds.isValid(taskId)) {
            return CompletableFuture.completedFuture(Awaiting.NOTHING);
        }
        return stripes.submit(taskId, false, stripe -> stripe.awaitsEnd(taskId)).exceptionally(e -> Awaiting.NOTHING);
    }

    /**
     * Closes the manager: lets the writes already asked for finish, forces the files to disk and
     * closes them (those of ended attempts still queued for forcing too, whose followers then get
     * their END_OF_STREAM), ends every other follower with END_OF_STREAM marked incomplete, and
     * stops the threads (waiting up to 10 s for each group; a consumer still blocked then is
     * interrupted). A started attempt's marker not yet in its file is written first. Uploads to
     * the artifact store that are queued are sent (10 s at most); those waiting to retry are
     * dropped, and named in a warning: their files stay in the log directory. Calls made
     * afterwards fail with IllegalStateException ({@link #follow}) or a failed future. Idempotent.
     */
    @Override
    public void close() {
        stripes.close(followers);
        // After the I/O threads, which hand ended files to the uploads until they stop.
        boolean interrupted = restores.close();
        interrupted |= uploads.close();
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Sets how long a record lookup may take (5 s): tests that answer lookups by hand need longer. */
    void lookupTimeout(Duration timeout) {
        lookupTimeoutMillis = timeout.toMillis();
    }

    /** Returns how many files are open for appending now. For tests and metrics. */
    int openFileCount() {
        return stripes.openFiles();
    }

    /**
     * The manager's load at one moment, for health figures.
     *
     * @param writeBacklog operations (batches, starts, ends, follower attaches) queued on the I/O
     *                     threads, not yet begun: a backlog that grows means the disk or the
     *                     threads cannot keep up, and the lines wait in memory
     * @param syncBacklog  ended files queued for forcing to disk, not yet begun: their followers
     *                     wait for their END_OF_STREAM meanwhile
     * @param openFiles    files open for appending
     * @param followers    live follows
     */
    public record Load(int writeBacklog, int syncBacklog, int openFiles, int followers) {
    }

    /** Returns the manager's load now (each figure read on its own, without a lock). */
    public Load load() {
        return new Load(stripes.writeBacklog(), stripes.syncBacklog(), stripes.openFiles(), followers.size());
    }

    /**
     * The uploads of ended logs into the artifact store, for health figures (all 0 without a store).
     *
     * @param pending ended logs the store does not hold yet: queued, being sent, or waiting to
     *                retry after a refusal (their files are only in the log directory meanwhile)
     * @param refused sends the store refused, or whose file could not be read, since start
     * @param stored  sends the store took, since start
     */
    public record Uploads(int pending, long refused, long stored) {
    }

    /** Returns the uploads' figures now. */
    public Uploads uploads() {
        return new Uploads(uploads.pending(), uploads.refused(), uploads.stored());
    }

    /** Returns how many task logs this manager cut at {@link Limits#maxLogBytes()} since start. */
    public long logsCut() {
        return sizeLimit.cuts();
    }

    // ---- argument checks -----------------------------------------------------------------------

    /** Checks what can be checked of a chunk without reading its text: it is read on the I/O thread. */
    private static void requireWellFormed(LogChunk chunk) {
        if (chunk.getFirstSequence() < 1) {
            throw new IllegalArgumentException("a log chunk's first sequence number must be at least 1, was "
                    + chunk.getFirstSequence());
        }
        ByteString text = chunk.getText();
        if (text.isEmpty() || text.byteAt(text.size() - 1) != '\n') {
            throw new IllegalArgumentException("a log chunk must hold at least one line, each ended by LF (chunk at"
                    + " sequence " + chunk.getFirstSequence() + " has " + text.size() + " bytes"
                    + (text.isEmpty() ? "" : " and does not end with LF") + ")");
        }
    }

    private static void requireNotNegative(long value, String name) {
        if (value < 0) {
            throw new IllegalArgumentException(name + " must not be negative, was " + value);
        }
    }
}
