package io.rlscheduler.master.internal.log;

import io.rlscheduler.core.TaskIds;
import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.LogRecord;
import com.google.protobuf.ByteString;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.LineBytes;
import io.rlscheduler.protocol.LogChunks;
import io.rlscheduler.protocol.LogLine;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's task log files: writes each task's output lines, exactly once and in order, to
 * {@code <dir>/<taskId>.log}, and serves followers that read a log from its start and then live.
 *
 * <h2>Files</h2>
 * The first line of a file is {@code TRACE_ID:<traceId>}; each attempt starts with a marker line
 * {@code ##RLS_ATTEMPT attempt=<n> epoch=<e>}, followed by its output lines (one file line per
 * output line; CR and LF inside a line become spaces), and may end with
 * {@code ##RLS_END state=<S> complete=<b> last=<n> [reason=<text>]}. A marker
 * {@code ##RLS_ATTEMPT ... after=<k>} starts an attempt's lines at k + 1: the lines up to k were
 * acknowledged by another master and are not in this file ({@link #write(String, long, long, List)}). Output lines that begin with
 * {@code ##RLS_} are stored behind the prefix {@code "##RLS_TEXT "}, so output cannot forge a marker.
 * The file is created with the first line a task prints: {@link #open} only records the attempt,
 * whose marker goes to the file with its first line, or with its end; an attempt that ends
 * complete without a line, on a task without a file, leaves no file at all (no write, no force).
 * Followers of such a task learn its end from this manager while it keeps the task's state, and
 * afterwards from the {@link RecordLookup} (the master reads the task record, where the worker
 * recorded how many lines the attempt printed). A started attempt's marker is written when its
 * state is dropped from the cache or the manager closes, so its number and trace id survive both;
 * after a crash, the first batch of an attempt the new master did not open, on a task without a
 * file, takes them from the task's record ({@link RecordLookup}). On a task whose file holds an
 * earlier attempt, or if Redis cannot tell, that attempt's lines come under {@code attempt=0}
 * (and a new file under {@code TRACE_ID:unknown}).
 * See {@link LogFileFormat}. File names come only from ids that pass {@link TaskIds#isValid}
 * (no '/', never '.' or '..'), checked before anything touches the disk; files are created,
 * written, read, cut and forced without following symbolic links (only the size check that notices
 * another master's writes follows one, and a link then makes the task's next write fail).
 *
 * <h2>Exactly once, in order</h2>
 * Sequence numbers are per attempt, from 1, without gaps. For the task's current epoch,
 * {@link #append} writes a line only if its sequence number is one above the last one written:
 * lower numbers are duplicates (a worker resending after a reconnect) and are skipped; a higher
 * number is a gap, which ends the batch there (the worker resends from the ack). The returned
 * value is the highest contiguous sequence number written, the value for {@code LogAck}.
 * Batches of an older epoch are stale (answered -1, nothing written); a batch of a newer epoch
 * starts that attempt. What the manager knows of the current epoch comes from {@link #open}, or
 * from the file; for a task with neither (its state dropped from the cache after a silent attempt,
 * a restarted master), the first batch, completion or abandon asks the {@link RecordLookup} first,
 * and the batches, completions, starts and abandons that come for the task meanwhile wait for the
 * answer, in call order (followers do not: they ask on their own). The record's newest attempt is
 * then started as {@link #open} would have: a worker cut off from the master that resends the
 * lines of a fenced attempt finds them stale, and its end too, instead of writing them (and a
 * false end) into a task that ended without printing. A lookup that fails, or takes over 5 s,
 * counts as telling nothing: the batch is written as without one. When the manager closes, the
 * operations still waiting run without it, but for an abandon, which then writes nothing (the end
 * it would write could contradict the record).
 *
 * <h2>Recovery</h2>
 * The file is the only durable state of the log (besides the task record's line count, which
 * stands for the files an attempt that printed nothing does not have). The first time a task is touched after the manager was
 * created (a master restart, a standby master taking over) or after its state was dropped from
 * the cache, the manager reads the file: the last {@code RLS_ATTEMPT} marker gives the current
 * epoch and attempt, the number of output lines after it gives the last sequence written, and an
 * {@code RLS_END} after it says the attempt already ended. A line cut short by a crash (no final
 * LF) is cut off: it was never acknowledged, so the worker resends it. A worker resending its
 * unacknowledged lines to the new master therefore adds nothing twice. Masters may share the log
 * directory (a standby that takes over carries the file on): before each operation on a task whose
 * state is cached, the manager compares the file's size with what it last wrote or read, and reads
 * the file again if another master changed it meanwhile.
 *
 * <h2>Threading</h2>
 * Every method returns at once and does no file I/O on the caller's thread, so Netty event loops
 * may call it. Tasks are spread over {@link Limits#ioThreads()} I/O threads by task id; each
 * task's state and file are touched only by its own I/O thread, in call order. Futures complete
 * on that thread: dependent stages must be short and must not block (a Netty
 * {@code writeAndFlush} is fine). Data is written to the OS before a future completes; a file is
 * forced to disk once its attempt has ended (on a sync thread, below) and when the manager closes,
 * not per batch.
 *
 * <h2>Durability of an ended attempt</h2>
 * An attempt that ends complete without a line, on a task without a file, has nothing to write or
 * force: its followers get their END_OF_STREAM at once. An {@link #abandon} of a task this manager
 * has neither a file nor a state for asks the {@link RecordLookup} first, and writes nothing if the
 * task ended that way (a standby's watcher abandons ends whose report went to the leader).
 * Otherwise, when an attempt ends ({@link #complete}, {@link #abandon}), its I/O thread writes the end marker
 * and closes the file, then hands the file to a sync thread ({@link Limits#syncThreads()} of them,
 * "rls-log-sync-N", tasks spread over them by id) and goes on with other tasks' lines at once: an
 * fsync takes from a tenth of a millisecond to many on a busy disk, and on the I/O thread it would
 * hold up every other task's writes and acknowledgements behind it. The sync thread forces the
 * file to disk and only then gives the attempt's followers their END_OF_STREAM; a follower that
 * subscribes after the end but before the force waits for it as well. So whoever has seen an
 * attempt's END_OF_STREAM from this manager can rely on the whole log of that attempt being on
 * disk. {@link #close()} forces the files still queued before it ends the followers. A
 * force that fails is logged (ERROR) and the followers still get their END_OF_STREAM, as when
 * the end marker itself cannot be written.
 *
 * <p>Followers' consumers run on delivery threads (a cached pool, "rls-log-follow-N"): one thread
 * at a time per follower, so a slow or blocked consumer holds up only itself. Each follower
 * reads the file written before it subscribed at its own pace, and gets later lines from a
 * bounded queue that the I/O thread fills without ever waiting; a follower whose queue is full is
 * dropped back to reading the file and rejoins live when it has caught up, so it loses no line.
 * Exceptions thrown by a consumer are logged and delivery goes on. Every follow ends with exactly
 * one END_OF_STREAM record.
 *
 * <h2>Resources</h2>
 * At most about {@link Limits#maxOpenFiles()} files are open for writing (least recently used are
 * closed; a file is also closed when its attempt ends), and each sync thread has at most one open
 * while it forces it; the states of at most about
 * {@link Limits#maxCachedTasks()} tasks are kept (least recently used tasks without followers or a
 * pending completion are dropped, and recovered from their file when touched again).
 *
 * <p>Thread-safe. {@link #close()} flushes and closes the files, ends all followers and stops the
 * threads.
 */
public final class TaskLogManager implements AutoCloseable {

    /** The trace id written to a file whose attempt was not started by {@link #open} (a log batch or an end came first). */
    public static final String UNKNOWN_TRACE_ID = "unknown";

    private static final Logger log = LoggerFactory.getLogger(TaskLogManager.class);
    private static final long CLOSE_TIMEOUT_MILLIS = 10_000;
    private static final long STALE = -1;
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
     */
    public record Limits(int ioThreads, int maxOpenFiles, int maxCachedTasks, int followerQueueCapacity,
                         int syncThreads) {

        /** Default number of sync threads: {@value}. */
        public static final int DEFAULT_SYNC_THREADS = 4;

        /** Checks that each limit is positive. */
        public Limits {
            requirePositive(ioThreads, "ioThreads");
            requirePositive(maxOpenFiles, "maxOpenFiles");
            requirePositive(maxCachedTasks, "maxCachedTasks");
            requirePositive(followerQueueCapacity, "followerQueueCapacity");
            requirePositive(syncThreads, "syncThreads");
        }

        /** Limits with the default number of sync threads, {@value #DEFAULT_SYNC_THREADS}. */
        public Limits(int ioThreads, int maxOpenFiles, int maxCachedTasks, int followerQueueCapacity) {
            this(ioThreads, maxOpenFiles, maxCachedTasks, followerQueueCapacity, DEFAULT_SYNC_THREADS);
        }

        /**
         * Returns the defaults: half the processors as I/O threads (1 to 4), 256 open files,
         * 4096 cached tasks, 4096 queued lines per follower, 4 sync threads.
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
    private final Stripe[] stripes;
    private final ThreadPoolExecutor[] syncers;
    private final FileForcer forcer;
    private final RecordLookup recordLookup;
    private volatile long lookupTimeoutMillis = LOOKUP_TIMEOUT_MILLIS;
    /** Per task, the last end whose file is not yet forced (followers that subscribe meanwhile wait for it). */
    private final ConcurrentHashMap<String, SyncTicket> unsynced = new ConcurrentHashMap<>();
    private final ThreadPoolExecutor delivery;
    private final Set<LogFollower> followers = ConcurrentHashMap.newKeySet();
    private final AtomicInteger openFiles = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();

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
        this(directory, limits, TaskLogManager::force, recordLookup);
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
     */
    public record Recorded(long epoch, int attempt, String traceId, LogRecord end) {
    }

    /** As {@link #TaskLogManager(Path, Limits)}, forcing files with {@code forcer}. */
    TaskLogManager(Path directory, Limits limits, FileForcer forcer) {
        this(directory, limits, forcer, RecordLookup.NONE);
    }

    /** As {@link #TaskLogManager(Path, Limits, RecordLookup)}, forcing files with {@code forcer}. */
    TaskLogManager(Path directory, Limits limits, FileForcer forcer, RecordLookup recordLookup) {
        this.limits = Objects.requireNonNull(limits, "limits");
        this.forcer = Objects.requireNonNull(forcer, "forcer");
        this.recordLookup = Objects.requireNonNull(recordLookup, "recordLookup");
        try {
            this.directory = Files.createDirectories(Objects.requireNonNull(directory, "directory"))
                    .toAbsolutePath().normalize();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create the task log directory " + directory, e);
        }
        int perStripeFiles = Math.max(1, limits.maxOpenFiles() / limits.ioThreads());
        int perStripeTasks = Math.max(1, limits.maxCachedTasks() / limits.ioThreads());
        this.stripes = new Stripe[limits.ioThreads()];
        for (int i = 0; i < stripes.length; i++) {
            stripes[i] = new Stripe(i, perStripeFiles, perStripeTasks);
        }
        this.syncers = new ThreadPoolExecutor[limits.syncThreads()];
        for (int i = 0; i < syncers.length; i++) {
            syncers[i] = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                    threads("rls-log-sync-" + i + "-"));
        }
        this.delivery = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 30, TimeUnit.SECONDS, new SynchronousQueue<>(),
                threads("rls-log-follow-"));
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
        TaskIds.require(taskId, "task id");
        Path path = directory.resolve(taskId + ".log");
        if (!directory.equals(path.getParent())) {
            // Cannot happen for a valid id; checked anyway because the name comes from a peer.
            throw new IllegalArgumentException("task id '" + taskId + "' does not name a file in " + directory);
        }
        return path;
    }

    /**
     * Starts an attempt's log. The marker {@code RLS_ATTEMPT attempt=<n> epoch=<e>}, and for a new
     * file the first line {@code TRACE_ID:<traceId>}, go to the file with the attempt's first
     * output line or its end (see "Files"): this call reads an existing file's state but writes
     * nothing. Idempotent per epoch: a second call for the same epoch changes nothing. A call for
     * an epoch older than the task's current one is stale and changes nothing. If the file
     * already exists its first line is kept (a file created by a log batch keeps
     * {@code TRACE_ID:unknown}), and an attempt already started by a log batch keeps its marker
     * with {@code attempt=0}. Returns at once.
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
        return submit(taskId, false, stripe -> {
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
        if (closed.get()) {
            log.debug("{} log starts after the log manager closed: ignored", starts.size());
            return;
        }
        Map<Stripe, List<Runnable>> byStripe = new IdentityHashMap<>();
        for (AttemptStart start : starts) {
            Stripe stripe = stripeOf(start.taskId());
            byStripe.computeIfAbsent(stripe, s -> new ArrayList<>()).add(operation(stripe, start.taskId(), false, s -> {
                s.open(start.taskId(), start.traceId(), start.epoch(), start.attempt());
                return null;
            }, new CompletableFuture<>()));
        }
        byStripe.forEach((stripe, operations) -> {
            try {
                stripe.executor.execute(() -> operations.forEach(Runnable::run));
            } catch (RejectedExecutionException closing) {
                log.debug("{} log starts after the log manager closed: ignored", operations.size());
            }
        });
    }

    /**
     * Writes a batch of a task's output lines, given one message per line (protocol minor 0): as
     * {@link #appendChunks} with the lines made into chunks ({@link LogChunks#fromLines}). Returns
     * at once.
     *
     * @param taskId the task (as received from a worker: it is checked)
     * @param epoch  the batch's lease epoch
     * @param lines  the lines, in ascending sequence order (they are sorted if not)
     * @return as {@link #appendChunks}
     */
    public CompletableFuture<Long> append(String taskId, long epoch, List<LogLine> lines) {
        try {
            Objects.requireNonNull(lines, "lines");
        } catch (RuntimeException invalid) {
            return CompletableFuture.failedFuture(invalid);
        }
        return appendChunks(taskId, epoch, LogChunks.fromLines(lines));
    }

    /**
     * Writes a batch of a task's output lines, given as chunks (runs of consecutive lines, each
     * ended by LF); see the class comment for the rules, which hold line by line inside a chunk
     * too: lines a chunk repeats are skipped, a chunk that starts beyond the next line is a gap and
     * ends the batch there. A CR inside a line is written as a space. Returns at once; the bytes
     * are handled on the task's I/O thread.
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
     * What a batch came to: the value to acknowledge (as {@link #appendChunks} returns it), and
     * whether the batch holds lines beyond a gap, i.e. lines before them that the attempt's log
     * would take are missing (the sender must resend what it has after {@code acked}). Never a gap
     * for a stale batch, an ended attempt, or lines beyond the attempt's last.
     */
    public record Written(long acked, boolean gap) {
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
        return submit(taskId, true, stripe -> stripe.append(taskId, epoch, acknowledged, chunks));
    }

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

    /**
     * Records that an attempt ended, as its worker reported. Once every line up to
     * {@code lastSequence} is written (now, or when the missing lines arrive), the end is written
     * to the file ({@code RLS_END}) and the file closed; then a sync thread forces it to disk, and
     * only then do followers get END_OF_STREAM with {@code finalState}, marked complete. Lines above {@code lastSequence}
     * are not written afterwards. Stale epochs and repeated calls are ignored. Returns at once.
     *
     * <p>If the missing lines never come (the worker died after reporting), call
     * {@link #abandon} to end the followers anyway.
     *
     * @param taskId       the task
     * @param epoch        the attempt's lease epoch
     * @param lastSequence the attempt's last sequence number (0: it printed nothing)
     * @param finalState   how it ended, e.g. "SUCCEEDED"
     * @throws IllegalArgumentException if {@code taskId} is not a valid task id, or a number is negative
     */
    public void complete(String taskId, long epoch, long lastSequence, String finalState) {
        pathOf(taskId);
        requireNotNegative(epoch, "epoch");
        requireNotNegative(lastSequence, "lastSequence");
        Objects.requireNonNull(finalState, "finalState");
        run(taskId, "complete", true, stripe -> stripe.complete(taskId, epoch, lastSequence, finalState));
    }

    /**
     * Records that a task ended without its worker reporting the end of its log (failed by the
     * reaper, cancelled while its worker was gone): followers get END_OF_STREAM with
     * {@code finalState} (after the lines already written, and once the file is forced to disk),
     * marked incomplete with a note naming {@code reason}; the end is written to the file, so later
     * followers get the same.
     * Lines that still arrive for the attempt are written. Ignored if the current attempt already
     * ended. Returns at once.
     *
     * @param taskId     the task
     * @param finalState the state it ended in, e.g. "FAILED"
     * @param reason     why, for the note; may be null
     * @throws IllegalArgumentException if {@code taskId} is not a valid task id
     */
    public void abandon(String taskId, String finalState, String reason) {
        abandon(taskId, finalState, reason, -1, -1);
    }

    /**
     * As {@link #abandon(String, String, String)}, knowing from the task's record the epoch of its
     * last attempt and how many lines that attempt printed (its worker records the count with the
     * end): if the log holds that attempt with exactly that many lines, nothing is missing but the
     * worker's report, and the attempt is completed as the report would have ({@link #complete}),
     * marked complete.
     *
     * @param epoch         the epoch of the task's last attempt, or -1 when not known
     * @param recordedLines the lines that attempt printed, as its worker recorded, or -1 when not known
     */
    public void abandon(String taskId, String finalState, String reason, long epoch, long recordedLines) {
        pathOf(taskId);
        Objects.requireNonNull(finalState, "finalState");
        String note = "the task ended without its worker reporting the end of its log; the log may be incomplete"
                + (reason == null || reason.isBlank() ? "" : ": " + reason);
        run(taskId, "abandon", true, stripe -> stripe.abandon(taskId, finalState, note, epoch, recordedLines));
    }

    /**
     * Follows a task's log: {@code consumer} receives every output line in the file, attempt
     * after attempt, then the lines written from then on, without gap or duplicate, then exactly
     * one END_OF_STREAM record: when the current attempt ends ({@link #complete}, {@link #abandon}),
     * at once after the replay if it has already ended, or when the follow or the manager is
     * closed. A task without a log yet is waited for, unless the {@link RecordLookup} says it ended
     * without one. The consumer runs on a delivery thread, never
     * concurrently with itself; see the class comment. Returns at once.
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
        if (closed.get()) {
            throw new IllegalStateException("the task log manager is closed");
        }
        LogFollower follower = new LogFollower(taskId, path, consumer, limits.followerQueueCapacity(), delivery, this);
        followers.add(follower);
        Stripe stripe = stripeOf(taskId);
        try {
            stripe.executor.execute(() -> {
                try {
                    stripe.subscribe(follower);
                } catch (IOException e) {
                    follower.terminate("cannot read the log file: " + e); // not thrown: its record lookup only ends followers
                }
                stripe.trim();
            });
        } catch (RejectedExecutionException closing) {
            follower.terminate("the task log manager was closed");
        }
        return follower;
    }

    /**
     * Returns the tasks whose log state is in the cache with an attempt started, not ended, and no
     * completion waiting for its last lines (its worker's report came): those whose end this
     * manager has not heard of. A state dropped from the cache is not among them (a task with
     * followers is never dropped). For a master that may have missed the events of tasks' ends.
     * Returns at once; completes on the I/O threads.
     */
    public CompletableFuture<List<String>> unendedAttempts() {
        List<CompletableFuture<List<String>>> parts = new ArrayList<>(stripes.length);
        for (Stripe stripe : stripes) {
            CompletableFuture<List<String>> part = new CompletableFuture<>();
            try {
                stripe.executor.execute(() -> part.complete(stripe.unended()));
            } catch (RejectedExecutionException closing) {
                part.complete(List.of());
            }
            parts.add(part);
        }
        return CompletableFuture.allOf(parts.toArray(new CompletableFuture<?>[0])).thenApply(ignored -> {
            List<String> all = new ArrayList<>();
            for (CompletableFuture<List<String>> part : parts) {
                all.addAll(part.join());
            }
            return all;
        });
    }

    /** What a task's log waits for, from {@link #awaitsEnd}. */
    public enum Awaiting {
        /** Nothing: its attempt ended, or a completion waits for its last lines (the worker reported). */
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
        return submit(taskId, false, stripe -> stripe.awaitsEnd(taskId)).exceptionally(e -> Awaiting.NOTHING);
    }

    /**
     * Closes the manager: lets the writes already asked for finish, forces the files to disk and
     * closes them (those of ended attempts still queued for forcing too, whose followers then get
     * their END_OF_STREAM), ends every other follower with END_OF_STREAM marked incomplete, and stops the threads
     * (waiting up to 10 s for each group; a consumer still blocked then is interrupted). Calls made
     * afterwards fail with IllegalStateException ({@link #follow}) or a failed future. Idempotent.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        for (Stripe stripe : stripes) {
            try {
                stripe.executor.execute(stripe::closeAll);
            } catch (RejectedExecutionException alreadyStopped) {
                // Nothing to flush.
            }
            stripe.executor.shutdown();
        }
        boolean interrupted = false;
        for (Stripe stripe : stripes) {
            interrupted |= awaitTermination(stripe.executor, "log writer");
        }
        // Only now: the I/O threads may have queued forces until they stopped.
        for (ThreadPoolExecutor syncer : syncers) {
            syncer.shutdown();
        }
        for (ThreadPoolExecutor syncer : syncers) {
            interrupted |= awaitTermination(syncer, "log sync");
        }
        for (LogFollower follower : followers) {
            // A follower whose end a sync thread queued just before stopping gets that end
            // (complete): its file was forced. The others end here, incomplete.
            follower.terminateUnlessEnding("the task log manager was closed");
        }
        delivery.shutdown();
        interrupted |= awaitTermination(delivery, "log delivery");
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
        return openFiles.get();
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
        int write = 0;
        for (Stripe stripe : stripes) {
            write += stripe.executor.getQueue().size();
        }
        int sync = 0;
        for (ThreadPoolExecutor syncer : syncers) {
            sync += syncer.getQueue().size();
        }
        return new Load(write, sync, openFiles.get(), followers.size());
    }

    // ---- called by followers -------------------------------------------------------------------

    /** Asks the task's I/O thread to attach a follower at the file's current end. */
    void attach(LogFollower follower) {
        Stripe stripe = stripeOf(follower.getTaskId());
        try {
            stripe.executor.execute(() -> {
                stripe.attach(follower);
                stripe.trim();
            });
        } catch (RejectedExecutionException closing) {
            follower.terminate("the task log manager was closed");
        }
    }

    /** Removes a closed follower from its task's live followers. */
    void detach(LogFollower follower) {
        Stripe stripe = stripeOf(follower.getTaskId());
        try {
            stripe.executor.execute(() -> stripe.detach(follower));
        } catch (RejectedExecutionException closing) {
            // The states are gone with the manager.
        }
    }

    /** Forgets a follower that has delivered its END_OF_STREAM. */
    void followerEnded(LogFollower follower) {
        followers.remove(follower);
    }

    // ---- plumbing ------------------------------------------------------------------------------

    @FunctionalInterface
    private interface StripeCall<T> {
        T call(Stripe stripe) throws IOException;
    }

    @FunctionalInterface
    private interface StripeAction {
        void run(Stripe stripe) throws IOException;
    }

    private Stripe stripeOf(String taskId) {
        return stripes[Math.floorMod(taskId.hashCode(), stripes.length)];
    }

    /**
     * Runs {@code call} on the task's I/O thread and completes the result with its value. It waits
     * behind a lookup of the task's record in flight; with {@code lookUpFirst}, a call on a task
     * the manager knows nothing of starts one (see {@link RecordLookup}).
     */
    private <T> CompletableFuture<T> submit(String taskId, boolean lookUpFirst, StripeCall<T> call) {
        if (closed.get()) {
            return CompletableFuture.failedFuture(new IllegalStateException("the task log manager is closed"));
        }
        Stripe stripe = stripeOf(taskId);
        CompletableFuture<T> result = new CompletableFuture<>();
        try {
            stripe.executor.execute(operation(stripe, taskId, lookUpFirst, call, result));
        } catch (RejectedExecutionException closing) {
            result.completeExceptionally(new IllegalStateException("the task log manager is closed"));
        }
        return result;
    }

    /** {@code call} as one operation on the task's I/O thread, completing {@code result} (see {@link #submit}). */
    private <T> Runnable operation(Stripe stripe, String taskId, boolean lookUpFirst, StripeCall<T> call,
                                   CompletableFuture<T> result) {
        return new Runnable() {
            @Override
            public void run() {
                if (stripe.parkIfLookingUp(taskId, this)) {
                    return;
                }
                T value;
                try {
                    if (lookUpFirst && stripe.lookUpFirst(taskId, this)) {
                        return;
                    }
                    value = call.call(stripe);
                } catch (IOException | RuntimeException e) {
                    log.warn("task {}: log write failed: {}", taskId, e.toString());
                    stripe.trim();
                    result.completeExceptionally(e);
                    return;
                }
                stripe.trim();
                result.complete(value);
            }
        };
    }

    private void run(String taskId, String what, boolean lookUpFirst, StripeAction action) {
        submit(taskId, lookUpFirst, stripe -> {
            action.run(stripe);
            return null;
        }).whenComplete((ignored, failure) -> {
            if (failure instanceof IllegalStateException) {
                log.debug("task {}: {} after the log manager closed: ignored", taskId, what);
            } else if (failure != null) {
                log.error("task {}: {} of its log failed", taskId, what, failure);
            }
        });
    }

    /**
     * Forces an ended attempt's file on its task's sync thread, then ends {@code followers} (and
     * any that subscribe meanwhile) with {@code endRecord}. Called by the task's I/O thread.
     */
    private void syncThenEnd(String taskId, Path path, long epoch, LogRecord endRecord, List<LogFollower> followers) {
        SyncTicket ticket = new SyncTicket(epoch, endRecord, followers);
        unsynced.put(taskId, ticket);
        Runnable sync = () -> {
            try {
                forcer.force(path);
            } catch (IOException | RuntimeException e) {
                log.error("task {}: cannot force its log file {} to disk: {}", taskId, path, e.toString());
            } finally {
                unsynced.remove(taskId, ticket);
                ticket.finish();
            }
        };
        try {
            syncers[Math.floorMod(taskId.hashCode(), syncers.length)].execute(sync);
        } catch (RejectedExecutionException closing) {
            sync.run(); // cannot happen before the I/O threads stopped; forced here all the same
        }
    }

    /** Forces a file's data (and the size needed to read it back) to disk; never through a link. */
    private static void force(Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            channel.force(false);
        }
    }

    /** An ended attempt whose file is queued for forcing, and the followers waiting for that. */
    private static final class SyncTicket {
        final long epoch;
        final LogRecord endRecord;
        // Guarded by this.
        private List<LogFollower> ending;
        private List<LogFollower> lateFollowers;
        private List<Long> lateLengths;
        private boolean done;

        SyncTicket(long epoch, LogRecord endRecord, List<LogFollower> ending) {
            this.epoch = epoch;
            this.endRecord = endRecord;
            this.ending = ending;
        }

        /**
         * Has a follower that subscribed after the end wait for the force: it is attached at
         * {@code fileLength} with the end once the file is forced.
         *
         * @return false if the file is forced already: attach it now
         */
        synchronized boolean defer(LogFollower follower, long fileLength) {
            if (done) {
                return false;
            }
            if (lateFollowers == null) {
                lateFollowers = new ArrayList<>(2);
                lateLengths = new ArrayList<>(2);
            }
            lateFollowers.add(follower);
            lateLengths.add(fileLength);
            return true;
        }

        /** The file is forced (or could not be): ends the followers. */
        void finish() {
            List<LogFollower> end;
            List<LogFollower> late;
            List<Long> lengths;
            synchronized (this) {
                done = true;
                end = ending;
                late = lateFollowers;
                lengths = lateLengths;
                ending = null;
                lateFollowers = null;
                lateLengths = null;
            }
            for (LogFollower follower : end) {
                follower.end(endRecord);
            }
            if (late != null) {
                for (int i = 0; i < late.size(); i++) {
                    late.get(i).attach(lengths.get(i), endRecord); // ended: never live, nothing to add
                }
            }
        }
    }

    private static final byte[] ESCAPE_PREFIX = LogFileFormat.ESCAPE_PREFIX.getBytes(StandardCharsets.US_ASCII);
    private static final byte[] RESERVED_PREFIX = LogFileFormat.RESERVED_PREFIX.getBytes(StandardCharsets.US_ASCII);

    /**
     * Returns the index of the LF that ends the line starting at {@code pos} (there is one: a
     * chunk ends with LF), turning each CR on the way into a space.
     */
    private static int lineEnd(byte[] bytes, int pos, int size) {
        int i = LineBytes.indexOfLineBreak(bytes, pos, size);
        while (bytes[i] == '\r') {
            bytes[i] = ' ';
            i = LineBytes.indexOfLineBreak(bytes, i + 1, size);
        }
        return i;
    }

    private static boolean startsWithReserved(byte[] bytes, int pos) {
        for (int k = 0; k < RESERVED_PREFIX.length; k++) {
            if (bytes[pos + k] != RESERVED_PREFIX[k]) {
                return false;
            }
        }
        return true;
    }

    private static void requireNotNegative(long value, String name) {
        if (value < 0) {
            throw new IllegalArgumentException(name + " must not be negative, was " + value);
        }
    }

    private boolean awaitTermination(ExecutorService executor, String what) {
        try {
            if (!executor.awaitTermination(CLOSE_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS)) {
                log.warn("{} threads did not stop within {} ms; interrupting them", what, CLOSE_TIMEOUT_MILLIS);
                executor.shutdownNow();
            }
            return false;
        } catch (InterruptedException e) {
            executor.shutdownNow();
            return true;
        }
    }

    private static ThreadFactory threads(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    /** Bytes to append, built before one write call. */
    private static final class Output {
        private static final int KEEP = 64 * 1024;
        private byte[] bytes = new byte[KEEP];
        private int size;

        void reset() {
            if (bytes.length > 16 * KEEP) {
                bytes = new byte[KEEP];
            }
            size = 0;
        }

        void line(String line) {
            byte[] encoded = line.getBytes(StandardCharsets.UTF_8);
            if (size + encoded.length + 1 > bytes.length) {
                bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + encoded.length + 1));
            }
            System.arraycopy(encoded, 0, bytes, size, encoded.length);
            size += encoded.length;
            bytes[size++] = '\n';
        }

        /** Makes room for {@code more} bytes and returns the array to write them at {@link #size()}. */
        byte[] reserve(int more) {
            if (size + more > bytes.length) {
                bytes = Arrays.copyOf(bytes, Math.max(bytes.length * 2, size + more));
            }
            return bytes;
        }

        void put(byte[] source, int offset, int length) {
            reserve(length);
            System.arraycopy(source, offset, bytes, size, length);
            size += length;
        }

        void advance(int length) {
            size += length;
        }

        byte[] copy(int from, int to) {
            return Arrays.copyOfRange(bytes, from, to);
        }

        int size() {
            return size;
        }

        ByteBuffer buffer() {
            return ByteBuffer.wrap(bytes, 0, size);
        }
    }

    /**
     * One I/O thread and the tasks that hash to it. Every method runs on that thread, so the
     * states need no locks; the order of calls for one task is the order they were made.
     */
    private final class Stripe {
        final ThreadPoolExecutor executor;
        private final int maxOpenFiles;
        private final int maxCachedTasks;
        private final LinkedHashMap<String, TaskLogState> states = new LinkedHashMap<>(64, 0.75f, true);
        /** The states with an open writer, least recently used first: trim closes from the front. */
        private final LinkedHashMap<TaskLogState, Boolean> writing = new LinkedHashMap<>(64, 0.75f, true);
        private final Output out = new Output();
        private byte[] scratch = new byte[64 * 1024];
        /** What {@link #skipLines} skipped. */
        private long linesSkipped;
        /** Tasks whose record is being looked up before a batch, completion or abandon: the operations waiting for it. */
        private final HashMap<String, ArrayDeque<Runnable>> lookingUp = new HashMap<>();
        /** Set by {@link #closeAll}: no more lookups, the waiting operations run without one. */
        private boolean closing;

        Stripe(int index, int maxOpenFiles, int maxCachedTasks) {
            this.executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                    threads("rls-log-io-" + index + "-"));
            this.maxOpenFiles = maxOpenFiles;
            this.maxCachedTasks = maxCachedTasks;
        }

        /** The cached tasks with a started attempt not ended (see {@link #unendedAttempts()}). */
        List<String> unended() {
            List<String> unended = new ArrayList<>();
            for (TaskLogState st : states.values()) {
                if (!st.needsRecovery && awaitsEnd(st)) {
                    unended.add(st.taskId);
                }
            }
            return unended;
        }

        Awaiting awaitsEnd(String taskId) throws IOException {
            TaskLogState st = state(taskId);
            return awaitsEnd(st) ? Awaiting.ATTEMPT_END : knowsNothing(st) ? Awaiting.NO_LOG_HERE : Awaiting.NOTHING;
        }

        private static boolean awaitsEnd(TaskLogState st) {
            return st.epoch >= 0 && st.ended == null && st.pendingEndSequence < 0;
        }

        // ---- operations ----

        void open(String taskId, String traceId, long epoch, int attempt) throws IOException {
            TaskLogState st = state(taskId);
            if (epoch < st.epoch) {
                log.debug("task {}: open for epoch {} older than {}: stale, ignored", taskId, epoch, st.epoch);
                return;
            }
            if (epoch > st.epoch) {
                startAttempt(st, epoch, attempt, traceId);
            }
        }

        Written append(String taskId, long epoch, long acknowledged, List<LogChunk> chunks) throws IOException {
            TaskLogState st = state(taskId);
            if (epoch < st.epoch) {
                log.debug("task {}: log batch for epoch {} older than {}: stale, ignored", taskId, epoch, st.epoch);
                return new Written(STALE, false);
            }
            if (epoch > st.epoch) {
                startAttempt(st, epoch, 0, UNKNOWN_TRACE_ID);
            }
            if (acknowledged > st.lastSequence && st.ended == null && acknowledged <= sequenceLimit(st)) {
                skipAcknowledged(st, acknowledged);
            }
            if (!chunks.isEmpty()) {
                writeChunks(st, chunks);
            }
            finishIfDue(st);
            // Chunks ascend, so a batch with lines beyond a gap has its last chunk start beyond the
            // next line: writeChunks stopped there, short of the attempt's last line.
            boolean gap = !chunks.isEmpty() && st.ended == null
                    && chunks.get(chunks.size() - 1).getFirstSequence() > st.lastSequence + 1
                    && st.lastSequence < sequenceLimit(st);
            return new Written(st.lastSequence, gap);
        }

        /**
         * Lines up to {@code acknowledged} that this log lacks were acknowledged by another master
         * and are gone from the worker: goes on after them, under a marker that says so, written
         * with the next line (the attempt's first marker if none is in the file yet).
         */
        private void skipAcknowledged(TaskLogState st, long acknowledged) {
            log.warn("task {} epoch {}: lines {} to {} of its output are not in this master's log and were"
                    + " acknowledged by another master (log directories not shared?); the log goes on after them",
                    st.taskId, st.epoch, st.lastSequence + 1, acknowledged);
            if (!st.markerPending) {
                st.markerPending = true;
                st.traceId = UNKNOWN_TRACE_ID; // used only if the file does not exist yet
            }
            st.markerAfter = acknowledged;
            st.lastSequence = acknowledged;
        }

        /** The highest sequence number the attempt's log takes: its last once it ended or its worker said where it ends. */
        private static long sequenceLimit(TaskLogState st) {
            return st.pendingEndSequence >= 0 ? Math.min(st.sequenceLimit, st.pendingEndSequence) : st.sequenceLimit;
        }

        void complete(String taskId, long epoch, long lastSequence, String finalState) throws IOException {
            TaskLogState st = state(taskId);
            if (epoch < st.epoch) {
                log.debug("task {}: completion for epoch {} older than {}: stale, ignored", taskId, epoch, st.epoch);
                return;
            }
            if (epoch > st.epoch) {
                startAttempt(st, epoch, 0, UNKNOWN_TRACE_ID);
            }
            if (st.ended != null) {
                return;
            }
            st.pendingEndSequence = lastSequence;
            st.pendingFinalState = finalState;
            finishIfDue(st);
        }

        void abandon(String taskId, String finalState, String note, long epoch, long recordedLines) throws IOException {
            TaskLogState st = state(taskId);
            if (st.ended != null) {
                return;
            }
            // A task the manager knew nothing of had its record looked up first (lookUpFirst): if
            // it ended silently (on another master: a standby's watcher abandons every end whose
            // report went to the leader), that end is recorded by now and nothing is written.
            if (closing && knowsNothing(st) && !st.recordLookedUp) {
                return; // closing without the lookup: an end written now could contradict the record
            }
            if (recordedLines >= 0 && epoch >= 0 && st.epoch == epoch && st.pendingEndSequence < 0
                    && st.lastSequence == recordedLines) {
                // The worker recorded how many lines the attempt printed, and all are here: only
                // its report was lost (it died just after recording the end). Complete.
                complete(taskId, epoch, recordedLines, finalState);
                return;
            }
            end(st, finalState, false, note);
        }

        /** What to do with the record lookup's answer, on the task's I/O thread. */
        @FunctionalInterface
        private interface LookupAnswer {
            void accept(Recorded recorded) throws IOException;
        }

        private static LogRecord endOf(Recorded recorded) {
            return recorded == null ? null : recorded.end();
        }

        /**
         * Asks the record lookup about a task and hands its answer (null when there is no record,
         * or it failed) to {@code then} on this I/O thread: at once if it has answered already (no
         * lookup configured), in call order; else once it answers. A manager closed meanwhile
         * drops the answer: its close ends the followers and runs the operations waiting for it.
         */
        private void askRecord(String taskId, String what, LookupAnswer then) throws IOException {
            CompletableFuture<Recorded> lookup;
            try {
                // On a copy: the lookup's own future may be shared with others, who must not see the timeout.
                lookup = Objects.requireNonNull(recordLookup.lookUp(taskId), "the record lookup returned null").copy()
                        .orTimeout(lookupTimeoutMillis, TimeUnit.MILLISECONDS);
            } catch (RuntimeException e) {
                lookup = CompletableFuture.failedFuture(e);
            }
            if (lookup.isDone() && !lookup.isCompletedExceptionally()) {
                then.accept(lookup.join());
                return;
            }
            lookup.whenComplete((recorded, failure) -> {
                if (failure != null) {
                    log.warn("task {}: cannot read its record ({}); {} as if it told nothing", taskId,
                            failure.toString(), what);
                }
                Recorded answer = failure == null ? recorded : null;
                try {
                    executor.execute(() -> {
                        try {
                            then.accept(answer);
                        } catch (IOException | RuntimeException e) {
                            log.error("task {}: {} of its log failed", taskId, what, e);
                        }
                        trim();
                    });
                } catch (RejectedExecutionException closing) {
                    // The manager's close ends the followers and ran the waiting operations.
                }
            });
        }

        /**
         * Parks {@code op} if its task's record is being looked up: it runs, in call order with
         * the others parked, once the answer is in. Returns whether it was parked.
         */
        boolean parkIfLookingUp(String taskId, Runnable op) {
            ArrayDeque<Runnable> waiting = lookingUp.get(taskId);
            if (waiting == null) {
                return false;
            }
            waiting.add(op);
            return true;
        }

        /**
         * Before a batch, completion or abandon of a task the manager knows nothing of (no file, no attempt
         * in memory) and has not looked up since its state was created: asks the task's record
         * and parks {@code op}, with every later operation on the task, until the answer is in.
         * Returns whether it did (then {@code op} runs later).
         */
        boolean lookUpFirst(String taskId, Runnable op) throws IOException {
            if (closing) {
                return false;
            }
            TaskLogState cached = states.get(taskId);
            if (cached != null && !cached.needsRecovery && (!knowsNothing(cached) || cached.recordLookedUp)) {
                return false; // the usual case, without the file check of state(): the operation makes it
            }
            TaskLogState st = state(taskId);
            if (!knowsNothing(st) || st.recordLookedUp) {
                return false;
            }
            ArrayDeque<Runnable> waiting = new ArrayDeque<>();
            waiting.add(op);
            lookingUp.put(taskId, waiting);
            askRecord(taskId, "the log write", recorded -> recordLookedUp(taskId, recorded));
            return true;
        }

        /**
         * The record lookup answered for a batch, completion or abandon: starts the record's
         * newest attempt here, as {@link #open} would have (so that batches of older epochs are
         * stale). If the task ended with that attempt printing nothing, records that silent end
         * instead (every batch is then stale or beyond its last line) and ends the followers with
         * it; if it ended without its worker recording the end of its log, ends the attempt as an
         * abandon does (followers get the incomplete end, the file records it). Then runs the
         * parked operations.
         */
        private void recordLookedUp(String taskId, Recorded recorded) {
            try {
                TaskLogState st = state(taskId);
                st.recordLookedUp = true;
                if (recorded != null && knowsNothing(st)) {
                    LogRecord end = recorded.end();
                    if (end != null && end.isComplete()) {
                        st.startAttempt(Math.max(recorded.epoch(), end.getEpoch()), end.getAttempt());
                        st.ended = end;
                        st.sequenceLimit = 0;
                        List<LogFollower> ending = new ArrayList<>(st.followers);
                        st.followers.clear();
                        for (LogFollower follower : ending) {
                            follower.end(end);
                        }
                    } else if (recorded.epoch() >= 0) {
                        startAttempt(st, recorded.epoch(), recorded.attempt(),
                                recorded.traceId() == null ? UNKNOWN_TRACE_ID : recorded.traceId());
                        if (end != null) {
                            end(st, end.getFinalState(), false, "the task ended (" + end.getFinalState()
                                    + ") without its worker reporting the end of its log; the log may be incomplete");
                        }
                    }
                }
            } catch (IOException | RuntimeException e) {
                // The parked operations meet the same error and answer it.
                log.warn("task {}: cannot apply its record to its log state: {}", taskId, e.toString());
            } finally {
                runParked(taskId);
            }
        }

        /** Runs the operations parked for a task's lookup, in call order. */
        private void runParked(String taskId) {
            ArrayDeque<Runnable> waiting = lookingUp.remove(taskId);
            if (waiting != null) {
                // An operation that asks again parks the rest behind it, still in order.
                for (Runnable op : waiting) {
                    op.run();
                }
            }
        }

        /**
         * A new follower: attached as {@link #attach} does. If the task has no file and no attempt
         * known here, the record lookup is asked too whether the task ended without a log; if it did,
         * and nothing was written meanwhile, the follower is ended with the lookup's record.
         */
        void subscribe(LogFollower follower) throws IOException {
            TaskLogState st = stateOrTerminate(follower);
            if (st == null) {
                return;
            }
            boolean lookUp = knowsNothing(st);
            attach(follower, st);
            if (lookUp) {
                askRecord(follower.getTaskId(), "follow", recorded -> lookedUp(follower, endOf(recorded)));
            }
        }

        /**
         * The record lookup answered for a new follower: if the task ended without a log and nothing
         * came meanwhile, end the follower with the lookup's record; else it stays attached.
         */
        private void lookedUp(LogFollower follower, LogRecord end) {
            TaskLogState st = states.get(follower.getTaskId());
            // A state is dropped from the cache only without followers: then this one has ended or
            // was closed. One that needs recovery met an I/O error: its follower waits.
            if (end != null && st != null && !st.needsRecovery && knowsNothing(st) && st.followers.remove(follower)) {
                follower.end(end);
            }
        }

        /** No file (or an empty one) and no attempt started, ended or pending here. */
        private static boolean knowsNothing(TaskLogState st) {
            return st.length == 0 && st.epoch < 0 && st.ended == null;
        }

        void attach(LogFollower follower) {
            TaskLogState st = stateOrTerminate(follower);
            if (st != null) {
                attach(follower, st);
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
            if (st.ended != null) {
                SyncTicket ticket = unsynced.get(st.taskId);
                if (ticket != null && ticket.epoch == st.epoch && ticket.defer(follower, st.length)) {
                    return; // the end is not on disk yet: the follower gets it once it is
                }
            }
            if (follower.attach(st.length, st.ended)) {
                st.followers.add(follower);
            }
        }

        void detach(LogFollower follower) {
            TaskLogState st = states.get(follower.getTaskId());
            if (st != null) {
                st.followers.remove(follower);
            }
        }

        void closeAll() {
            closing = true;
            for (String taskId : new ArrayList<>(lookingUp.keySet())) {
                runParked(taskId);
            }
            for (TaskLogState st : states.values()) {
                if (st.markerPending && st.ended == null) {
                    writePendingMarker(st); // as when dropped from the cache: the file outlives the state
                }
                if (st.writer != null) {
                    try {
                        st.writer.force(false);
                    } catch (IOException e) {
                        log.warn("task {}: cannot force log file to disk: {}", st.taskId, e.toString());
                    }
                    closeWriter(st);
                }
            }
            states.clear();
        }

        // ---- writing ----

        /**
         * Starts an attempt in memory. Its marker (and the file's first line, for a new file) goes
         * into the file with the attempt's first line or its end ({@link #pendingMarker}): an
         * attempt that ends complete without printing a line, on a task without a file, leaves none.
         */
        private void startAttempt(TaskLogState st, long epoch, int attempt, String traceId) {
            st.startAttempt(epoch, attempt);
            st.markerPending = true;
            st.traceId = traceId;
        }

        /** Puts the current attempt's pending marker, and the first line of a new file, into the output. */
        private void pendingMarker(TaskLogState st) {
            if (!st.markerPending) {
                return;
            }
            if (st.length == 0) {
                out.line(LogFileFormat.header(st.traceId));
            }
            out.line(LogFileFormat.attemptMarker(st.attempt, st.epoch, st.markerAfter));
        }

        /**
         * Writes a started attempt's pending marker before its state is dropped from the cache:
         * the file alone outlives the state, and the attempt's number and trace id are not to be
         * lost if it prints later. If that fails the state is dropped anyway: its lines then come
         * under a marker with attempt 0, as after a restart.
         */
        private void writePendingMarker(TaskLogState st) {
            try {
                writer(st);
                out.reset();
                pendingMarker(st);
                commit(st);
                markerWritten(st);
            } catch (IOException | RuntimeException e) {
                log.warn("task {}: cannot write the start of its attempt {} to its log: {}", st.taskId, st.attempt,
                        e.toString());
            }
        }

        /** The output now in the file held the pending marker, if there was one. */
        private void markerWritten(TaskLogState st) {
            st.markerPending = false;
            st.markerAfter = 0;
            st.traceId = null;
        }

        /**
         * Writes the lines of {@code chunks} that come next (skipping those already written, up to
         * a gap or the attempt's last line) with one write, then hands each chunk's written part to
         * the live followers as one block of file bytes. Each byte is read once, to find the ends of
         * lines and turn CRs into spaces, and copied once; only a line that begins with
         * {@code ##RLS_} takes more (its escape).
         */
        private void writeChunks(TaskLogState st, List<LogChunk> chunks) throws IOException {
            long last = st.lastSequence;
            // No line above the attempt's last: once it ended complete, or once its worker said
            // where it ends (a line beyond that cannot be the attempt's).
            long limit = sequenceLimit(st);
            if (!writesAny(st, chunks, limit)) {
                return; // duplicates only, or beyond the end: leave a closed file closed
            }
            writer(st);
            // Opening the file may have read it again (another master wrote to it): go on from there.
            last = st.lastSequence;
            limit = sequenceLimit(st);
            out.reset();
            pendingMarker(st);
            List<LiveBlock> blocks = st.followers.isEmpty() ? null : new ArrayList<>(chunks.size());
            for (LogChunk chunk : chunks) {
                if (last >= limit) {
                    break;
                }
                ByteString text = chunk.getText();
                int n = text.size();
                byte[] bytes = scratch(n);
                text.copyTo(bytes, 0);
                long first = chunk.getFirstSequence();
                int pos = 0;
                long skipped = 0;
                if (first <= last) { // lines this chunk repeats
                    pos = skipLines(bytes, n, last - first + 1);
                    skipped = linesSkipped;
                }
                if (pos == n) {
                    continue;
                }
                if (first + skipped != last + 1) {
                    break; // a gap: the worker resends from the acknowledgement
                }
                int blockStart = out.size();
                int lines = copyLines(bytes, pos, n, limit - last);
                if (blocks != null) {
                    blocks.add(new LiveBlock(st.attempt, st.epoch, chunk.getStreamValue(), last + 1, lines,
                            out.copy(blockStart, out.size()), st.length + blockStart));
                }
                last += lines;
            }
            if (last == st.lastSequence) {
                return;
            }
            commit(st);
            markerWritten(st);
            st.lastSequence = last;
            if (blocks != null) {
                offerLive(st, blocks);
            }
        }

        /**
         * Returns the offset after the first {@code count} lines of {@code bytes[0, n)} (or
         * {@code n} if it has fewer), and how many it skipped in {@link #linesSkipped}.
         */
        private int skipLines(byte[] bytes, int n, long count) {
            int pos = 0;
            long skipped = 0;
            while (pos < n && skipped < count) {
                pos = lineEnd(bytes, pos, n) + 1;
                skipped++;
            }
            linesSkipped = skipped;
            return pos;
        }

        /**
         * Appends up to {@code maxLines} lines of {@code bytes[pos, n)} to the output, CRs made
         * spaces and a line that begins with {@code ##RLS_} escaped; returns how many. Bytes go in
         * one copy per run of lines between escapes (usually the whole chunk).
         */
        private int copyLines(byte[] bytes, int pos, int n, long maxLines) {
            int lines = 0;
            int runStart = pos;
            while (pos < n && lines < maxLines) {
                int end = lineEnd(bytes, pos, n);
                if (bytes[pos] == '#' && end - pos >= RESERVED_PREFIX.length && startsWithReserved(bytes, pos)) {
                    out.put(bytes, runStart, pos - runStart);
                    out.put(ESCAPE_PREFIX, 0, ESCAPE_PREFIX.length);
                    runStart = pos;
                }
                pos = end + 1;
                lines++;
            }
            out.put(bytes, runStart, pos - runStart);
            return lines;
        }

        private void offerLive(TaskLogState st, List<LiveBlock> blocks) {
            for (Iterator<LogFollower> it = st.followers.iterator(); it.hasNext();) {
                LogFollower follower = it.next();
                for (LiveBlock block : blocks) {
                    if (!follower.offer(block)) {
                        it.remove();
                        break;
                    }
                }
            }
        }

        /** A reused array of at least {@code n} bytes to read a chunk into. */
        private byte[] scratch(int n) {
            if (scratch.length < n) {
                scratch = new byte[Math.max(n, scratch.length * 2)];
            }
            return scratch;
        }

        private static boolean writesAny(TaskLogState st, List<LogChunk> chunks, long limit) {
            for (LogChunk chunk : chunks) {
                long first = chunk.getFirstSequence();
                if (first > st.lastSequence + 1) {
                    return false; // a gap first
                }
                // The chunk reaches past the last line written (its line count is its LF count;
                // counted only for a chunk that starts at or below it, i.e. a resend).
                if ((first == st.lastSequence + 1 || first + LogChunks.lineCount(chunk.getText()) - 1 > st.lastSequence)) {
                    return st.lastSequence + 1 <= limit;
                }
            }
            return false;
        }

        private void finishIfDue(TaskLogState st) {
            if (st.ended == null && st.pendingEndSequence >= 0 && st.lastSequence >= st.pendingEndSequence) {
                end(st, st.pendingFinalState, true, null);
            }
        }

        /**
         * Ends the current attempt: writes RLS_END and closes the file, then has a sync thread
         * force it and end the followers (see "Durability of an ended attempt").
         */
        private void end(TaskLogState st, String finalState, boolean complete, String note) {
            boolean written = false;
            // An attempt that ended complete without a line, on a task with no file: nothing to
            // write or force. The task record says how it ended (and that it printed nothing),
            // which is what followers are told once this state is gone (RecordLookup). An abandoned
            // end is written even then: it carries the reason, and it is rare.
            boolean silent = complete && st.markerPending && st.length == 0;
            if (!silent) {
                try {
                    writer(st);
                    out.reset();
                    if (st.markerPending) {
                        pendingMarker(st);
                    } else if (st.length == 0) {
                        out.line(LogFileFormat.header(UNKNOWN_TRACE_ID));
                    }
                    out.line(LogFileFormat.endMarker(finalState, complete, st.lastSequence, note));
                    commit(st);
                    markerWritten(st);
                    written = true;
                } catch (IOException e) {
                    // The followers still get their END_OF_STREAM; only later ones may miss it.
                    log.error("task {}: cannot write the end of its log: {}", st.taskId, e.toString());
                } finally {
                    closeWriter(st);
                }
            }
            LogRecord endRecord = LogRecord.endOfStream(st.taskId, st.attempt, st.epoch, finalState, complete, note);
            st.ended = endRecord;
            st.pendingEndSequence = -1;
            st.pendingFinalState = null;
            if (complete) {
                st.sequenceLimit = st.lastSequence;
            }
            List<LogFollower> ending = st.followers.isEmpty() ? List.of() : new ArrayList<>(st.followers);
            st.followers.clear();
            if (written) {
                syncThenEnd(st.taskId, st.path, st.epoch, endRecord, ending);
            } else {
                for (LogFollower follower : ending) {
                    follower.end(endRecord);
                }
            }
        }

        private void commit(TaskLogState st) throws IOException {
            ByteBuffer buffer = out.buffer();
            try {
                while (buffer.hasRemaining()) {
                    st.writer.write(buffer);
                }
            } catch (IOException e) {
                st.needsRecovery = true;
                closeWriter(st);
                throw e;
            }
            st.length += out.size();
        }

        /** Returns the task's append channel, opening it (and creating the file) if needed. */
        private FileChannel writer(TaskLogState st) throws IOException {
            if (st.writer != null) {
                return st.writer;
            }
            for (int tries = 0;; tries++) {
                FileChannel channel = FileChannel.open(st.path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                        StandardOpenOption.APPEND, LinkOption.NOFOLLOW_LINKS);
                long size;
                try {
                    size = channel.size();
                } catch (IOException e) {
                    channel.close();
                    throw e;
                }
                if (size == st.length) {
                    st.writer = channel;
                    writing.put(st, Boolean.TRUE);
                    openFiles.incrementAndGet();
                    return channel;
                }
                channel.close();
                if (tries > 0) {
                    throw new IOException("log file " + st.path + " keeps changing outside the log manager");
                }
                log.warn("task {}: log file {} changed outside the log manager ({} bytes, expected {}); reading it"
                        + " again", st.taskId, st.path, size, st.length);
                recover(st);
            }
        }

        private void closeWriter(TaskLogState st) {
            if (st.writer == null) {
                return;
            }
            try {
                st.writer.close();
            } catch (IOException e) {
                log.warn("task {}: closing log file: {}", st.taskId, e.toString());
            }
            st.writer = null;
            writing.remove(st);
            openFiles.decrementAndGet();
        }

        // ---- state ----

        private TaskLogState state(String taskId) throws IOException {
            TaskLogState st = states.get(taskId);
            if (st == null) {
                st = new TaskLogState(taskId, pathOf(taskId));
                states.put(taskId, st);
            } else if (st.writer != null) {
                writing.get(st); // most recently used
            }
            if (!st.needsRecovery && changedOutside(st)) {
                log.info("task {}: log file {} changed outside this master ({} bytes, expected {}): another master"
                        + " sharing the directory wrote it; reading it again", taskId, st.path, sizeOf(st), st.length);
                st.needsRecovery = true;
            }
            if (st.needsRecovery) {
                recover(st);
            }
            return st;
        }

        /**
         * Whether the file is not as long as this manager last wrote or read it: another master
         * sharing the log directory wrote to it meanwhile (this master lost the leadership and
         * the new leader carried the log on). Every operation then starts from the file as it is,
         * not from the cached state: a stale state would write lines twice, append lines of an
         * older epoch after a newer attempt's marker, or end an attempt a second time. One fstat.
         */
        private boolean changedOutside(TaskLogState st) throws IOException {
            return sizeOf(st) != st.length;
        }

        private long sizeOf(TaskLogState st) throws IOException {
            if (st.writer != null) {
                return st.writer.size();
            }
            // java.io.File.length: 0 for a missing file, which most tasks have (an attempt that
            // prints nothing makes none), without the exception that Files.readAttributes throws
            // (and builds a stack trace for) on every such call. It follows links, as recover's
            // exists() does; a file that cannot be read counts as missing, and the write that comes
            // next meets the error.
            return st.path.toFile().length();
        }

        /**
         * Rebuilds a task's state from its file: the last attempt marker gives the epoch and
         * attempt, the output lines after it the last sequence, an end marker after it the end.
         * A last line without LF (cut short by a crash, never acknowledged) is cut off. Live
         * followers are detached: they read what they may have missed from the file and attach
         * again.
         */
        private void recover(TaskLogState st) throws IOException {
            st.needsRecovery = true;
            closeWriter(st);
            for (LogFollower follower : st.followers) {
                follower.detach();
            }
            st.followers.clear();
            long pendingEpoch = st.epoch;
            long pendingSequence = st.pendingEndSequence;
            String pendingState = st.pendingFinalState;
            boolean markerPending = st.markerPending;
            long pendingAfter = st.markerAfter;
            int pendingAttempt = st.attempt;
            String pendingTrace = st.traceId;
            LogRecord silentEnd = markerPending && st.ended != null && st.ended.isComplete() ? st.ended : null;
            st.startAttempt(-1, 0);
            st.length = 0;
            // java.io.File.exists: Files.exists throws (and catches) an exception for a missing
            // file, which is what every new task's first touch finds. It follows links; a dangling
            // link then counts as missing and the write that comes next refuses it (NOFOLLOW_LINKS).
            if (st.path.toFile().exists()) {
                long lines = 0;
                try (LogLineReader reader = LogLineReader.open(st.path, 0)) {
                    boolean first = true;
                    for (String line = reader.next(Long.MAX_VALUE); line != null; line = reader.next(Long.MAX_VALUE)) {
                        LogFileFormat.Line parsed = LogFileFormat.parse(line, first);
                        first = false;
                        lines++;
                        switch (parsed.kind()) {
                            case ATTEMPT -> {
                                st.startAttempt(parsed.epoch(), parsed.attempt());
                                st.lastSequence = parsed.last(); // 0, or lines another master acknowledged
                            }
                            case TEXT -> {
                                if (st.epoch >= 0) {
                                    st.lastSequence++;
                                }
                            }
                            case END -> {
                                st.ended = LogRecord.endOfStream(st.taskId, st.attempt, st.epoch, parsed.finalState(),
                                        parsed.complete(), parsed.reason());
                                st.sequenceLimit = parsed.complete() ? parsed.last() : Long.MAX_VALUE;
                            }
                            default -> {
                                // the header
                            }
                        }
                    }
                    st.length = reader.consumed();
                }
                long size = Files.size(st.path);
                if (size > st.length) {
                    log.warn("task {}: log file {} ends with an incomplete line ({} bytes); cutting it off, the"
                            + " worker resends it", st.taskId, st.path, size - st.length);
                    try (FileChannel channel = FileChannel.open(st.path, StandardOpenOption.WRITE,
                            LinkOption.NOFOLLOW_LINKS)) {
                        channel.truncate(st.length);
                    }
                }
                log.debug("task {}: log state read from {}: {} lines, epoch {}, attempt {}, last sequence {}{}",
                        st.taskId, st.path, lines, st.epoch, st.attempt, st.lastSequence,
                        st.ended == null ? "" : ", ended");
            }
            if (markerPending && pendingEpoch > st.epoch) {
                // An attempt started here whose marker is not written yet: the file cannot hold it.
                startAttempt(st, pendingEpoch, pendingAttempt, pendingTrace);
                if (silentEnd != null) {
                    st.ended = silentEnd;
                    st.sequenceLimit = 0;
                }
            }
            if (markerPending && pendingAfter > st.lastSequence && st.epoch == pendingEpoch && st.ended == null) {
                // A skip past lines another master acknowledged, not in the file yet: still due.
                st.markerPending = true;
                st.markerAfter = pendingAfter;
                st.lastSequence = pendingAfter;
                if (st.traceId == null) {
                    st.traceId = pendingTrace == null ? UNKNOWN_TRACE_ID : pendingTrace;
                }
            }
            if (pendingSequence >= 0 && st.epoch == pendingEpoch && st.ended == null) {
                st.pendingEndSequence = pendingSequence;
                st.pendingFinalState = pendingState;
            }
            st.needsRecovery = false;
        }

        /**
         * Closes the least recently used files, and drops the least recently used idle states, over
         * the limits. Runs after every operation, so it must not walk the states: files are closed
         * from the front of their own LRU order, and states dropped from the front of theirs
         * (skipping only the few that are followed or wait for lines).
         */
        void trim() {
            while (writing.size() > maxOpenFiles) {
                closeWriter(writing.keySet().iterator().next());
            }
            if (states.size() <= maxCachedTasks) {
                return;
            }
            for (Iterator<TaskLogState> it = states.values().iterator(); it.hasNext() && states.size() > maxCachedTasks;) {
                TaskLogState st = it.next();
                if (st.isEvictable()) {
                    if (st.markerPending && st.ended == null) {
                        writePendingMarker(st);
                    }
                    closeWriter(st);
                    it.remove();
                }
            }
        }
    }
}
