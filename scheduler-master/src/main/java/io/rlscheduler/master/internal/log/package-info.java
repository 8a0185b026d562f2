/**
 * The master's task log files; not API, may change in any release. The public ways in are
 * {@link io.rlscheduler.master.LogFiles} (read a log file) and
 * {@link io.rlscheduler.master.TaskHandle#followLogs} (follow a task's log).
 *
 * <p>{@link io.rlscheduler.master.internal.log.TaskLogManager} is the façade the rest of the
 * master calls. Behind it, one class per mechanism:
 * <ul>
 *   <li>{@code LogStripe}: one I/O thread and the tasks that hash to it. Every operation on a task
 *       runs there, in call order, so no caller's thread (a Netty event loop) touches a file and
 *       a task's state needs no lock. It caches the states of at most about
 *       {@code maxCachedTasks} tasks (least recently used idle ones are dropped, and read from
 *       their file when touched again).</li>
 *   <li>{@code LogStripes} and {@code LogThreads}: the manager's threads (the stripes, the sync
 *       threads, the followers' delivery pool), and stopping them in the order that loses
 *       nothing.</li>
 *   <li>{@code TaskLogState} and {@code LogPhase}: what is known of one task's log, and the phase
 *       of its current attempt (NONE, RUNNING, ENDING, ENDED) with its one table of moves.</li>
 *   <li>{@code AttemptSequencer}: exactly once, in order. Sequence numbers are per attempt, from
 *       1, without gaps; duplicates are skipped, a gap ends the batch (the worker resends from the
 *       acknowledgement), an older epoch is stale, a newer one starts its attempt.</li>
 *   <li>{@code LinePatience}: how long an end recorded in Redis waits for the attempt's last
 *       lines before the log ends with those it has, marked incomplete.</li>
 *   <li>{@code LogSizeLimit}: the cap on one task's log file, the cut marker written where the
 *       next line would pass it, and telling of the cut ({@code LogEvents}, which also tells of
 *       attempts' ends).</li>
 *   <li>{@code LineEncoder}: the bytes of one write (markers, output lines with CRs made spaces
 *       and {@code ##RLS_} escaped), from each chunk's bytes in one pass.</li>
 *   <li>{@code LogFileWriter}: opening, appending to and closing the files, at most about
 *       {@code maxOpenFiles} open; never through a symbolic link.</li>
 *   <li>{@code LogRecovery}: rebuilding a state from its file (after a restart, a take-over,
 *       an eviction, an I/O error, or another master's write to a shared directory), cutting off
 *       a line a crash left without LF.</li>
 *   <li>{@code LogDurability} and {@code SyncTicket}: an ended attempt's file is forced to disk
 *       on a sync thread before its followers get END_OF_STREAM, so whoever has seen the end can
 *       rely on the whole log being on disk.</li>
 *   <li>{@code RecordLookups}: asking the task's record about a task with neither a file nor a
 *       state here (an attempt that ends complete without a line leaves no file; a restarted
 *       master has not seen the attempts started before), and parking its operations meanwhile;
 *       for a task that ended, restoring its log from the artifact store first.</li>
 *   <li>{@code LogFollower} and {@code LiveBlock}: a follower replays the file at its consumer's
 *       pace, then takes live lines from a bounded queue that the I/O thread fills without
 *       waiting; one that falls behind goes back to the file and loses no line.</li>
 *   <li>{@code LogUploads} and {@code UploadPhase}: copying an ended log whole into the artifact
 *       store on upload threads, retried with backoff while the store refuses; one upload per
 *       task at a time, its phase (QUEUED, SENDING, SENDING_STALE, BACKING_OFF, STORED) with its
 *       one table of moves.</li>
 *   <li>{@code LogRestores}: bringing the log of a task that ended elsewhere back from the store
 *       into the log directory, before {@code RecordLookups} hands the record's answer to the I/O
 *       thread.</li>
 *   <li>{@code LogFileFormat}, {@code LogLineReader}, {@code LogCursor}: the file format, reading
 *       its lines from a byte offset, and numbering them; the one reader of the format, used by
 *       recovery, followers and {@link io.rlscheduler.master.internal.log.LogFileRecords}.</li>
 * </ul>
 */
package io.rlscheduler.master.internal.log;
