package io.rlscheduler.master.internal.log;

import io.rlscheduler.master.LogRecord;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Forces the files of ended attempts to disk, and only then gives their followers the
 * END_OF_STREAM: whoever has seen an attempt's end from the manager can rely on the attempt's
 * whole log being on disk. The I/O thread writes the end marker, closes the file and hands it
 * here ({@link #syncThenEnd}), then goes on with other tasks at once: a force takes from a tenth
 * of a millisecond to many on a busy disk, and on the I/O thread it would hold up every other
 * task's writes and acknowledgements. Tasks are spread by id over the sync threads
 * ("rls-log-sync-N"), which mostly wait for the disk; a journaling file system commits
 * concurrent forces together. A force that fails is logged (ERROR) and the followers still get
 * their end. Thread-safe.
 */
final class LogDurability {

    private static final Logger log = LoggerFactory.getLogger(LogDurability.class);

    private final ThreadPoolExecutor[] syncers;
    private final TaskLogManager.FileForcer forcer;
    /** Per task, the last end whose file is not yet forced (followers that subscribe meanwhile wait for it). */
    private final ConcurrentHashMap<String, SyncTicket> unsynced = new ConcurrentHashMap<>();

    LogDurability(int syncThreads, TaskLogManager.FileForcer forcer) {
        this.forcer = Objects.requireNonNull(forcer, "forcer");
        this.syncers = new ThreadPoolExecutor[syncThreads];
        for (int i = 0; i < syncers.length; i++) {
            syncers[i] = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
                    LogThreads.named("rls-log-sync-" + i + "-"));
        }
    }

    /** Forces a file's data (and the size needed to read it back) to disk; never through a link. */
    static void force(Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            channel.force(false);
        }
    }

    /**
     * Forces an ended attempt's file on its task's sync thread, then ends {@code followers} (and
     * any that subscribe meanwhile, {@link #deferUntilForced}) with {@code endRecord}. Called by
     * the task's I/O thread.
     */
    void syncThenEnd(String taskId, Path path, long epoch, LogRecord endRecord, List<LogFollower> followers) {
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

    /**
     * Has a follower that subscribes after its attempt's end wait for the force of that end, if
     * it is still queued: the follower is then attached at {@code fileLength}, with the end, once
     * the file is on disk.
     *
     * @return whether it waits; false: attach it now
     */
    boolean deferUntilForced(String taskId, long epoch, LogFollower follower, long fileLength) {
        SyncTicket ticket = unsynced.get(taskId);
        return ticket != null && ticket.epoch == epoch && ticket.defer(follower, fileLength);
    }

    /** Returns the ended files queued for forcing, not yet begun. */
    int backlog() {
        int queued = 0;
        for (ThreadPoolExecutor syncer : syncers) {
            queued += syncer.getQueue().size();
        }
        return queued;
    }

    /**
     * Forces the files still queued, ending their followers, and stops the sync threads. Call
     * once the I/O threads have stopped: until then they may queue more.
     *
     * @return whether the calling thread was interrupted meanwhile
     */
    boolean shutDown() {
        for (ThreadPoolExecutor syncer : syncers) {
            syncer.shutdown();
        }
        boolean interrupted = false;
        for (ThreadPoolExecutor syncer : syncers) {
            interrupted |= LogThreads.awaitTermination(syncer, "log sync");
        }
        return interrupted;
    }
}
