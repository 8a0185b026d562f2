package io.rlscheduler.worker.internal;

import io.netty.channel.Channel;
import io.rlscheduler.protocol.LogAck;
import io.rlscheduler.protocol.LogBatch;
import io.rlscheduler.protocol.LogChunk;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends the attempts' output lines to the master: in batches of at most {@code logBatchLines}
 * lines and {@value #BATCH_BYTES} bytes, every {@code logFlushInterval} or at once when a full
 * batch waits or the socket drained; everything unacknowledged again after a reconnect or when
 * the master asks; and drops the lines of an attempt the master will no longer take. Writes only
 * on the channel's event loop, so batches leave in sequence order whoever asked for the flush.
 * Thread-safe.
 */
public final class LogShipper {

    private static final Logger log = LoggerFactory.getLogger(LogShipper.class);
    /** The most bytes of lines in one log batch (a single larger block still goes, alone): 512 KiB. */
    public static final int BATCH_BYTES = 512 * 1024;

    private final WorkerRuntime runtime;
    private final Attempts attempts;
    private final int batchLines;
    /** A flush of full log batches is queued on the event loop (so lines do not queue one each). */
    private final AtomicBoolean flushRequested = new AtomicBoolean();

    public LogShipper(WorkerRuntime runtime, Attempts attempts) {
        this.runtime = runtime;
        this.attempts = attempts;
        this.batchLines = runtime.options().getLogBatchLines();
    }

    /** Starts the flush tick on the event loop. */
    public void start() {
        long flush = runtime.options().getLogFlushInterval().toMillis();
        runtime.loop().scheduleWithFixedDelay(this::flush, flush, flush, TimeUnit.MILLISECONDS);
    }

    /**
     * Called after lines were added to {@code logs}, {@code unsent} of them now unsent: has them
     * sent at once, rather than at the next tick, when a full batch waits and the channel can send.
     */
    public void added(LogBuffer logs, long unsent) {
        if ((unsent >= batchLines || logs.unsentBytes() >= BATCH_BYTES) && canSend()
                && flushRequested.compareAndSet(false, true)) {
            runtime.loop().execute(() -> {
                flushRequested.set(false);
                flush();
            });
        }
    }

    /**
     * Whether a flush now could send anything: a ready channel that takes writes. While not (a
     * master failover, a slow socket) full batches wait for the tick or for the channel to drain,
     * instead of each new line queueing a flush that cannot send.
     */
    private boolean canSend() {
        Channel channel = runtime.link().readyChannel();
        return channel != null && channel.isWritable();
    }

    /** Sends every attempt's unsent lines while the channel takes writes. */
    public void flush() {
        Channel channel = runtime.link().readyChannel();
        if (channel == null) {
            return;
        }
        if (!channel.eventLoop().inEventLoop()) {
            channel.eventLoop().execute(this::flush);
            return;
        }
        boolean wrote = false;
        for (Attempt a : attempts.all()) {
            wrote |= write(channel, a);
        }
        if (wrote) {
            channel.flush();
        }
    }

    /**
     * Writes the attempt's lines not yet sent on this channel, while it is writable; does not
     * flush. Each batch also says up to which line the master acknowledged them: this worker no
     * longer has those, so a master without them goes on after them. On the event loop only.
     */
    public boolean write(Channel channel, Attempt attempt) {
        LogBuffer logs = attempt.getLogs();
        boolean wrote = false;
        while (channel.isWritable()) {
            List<LogChunk> batch = logs.nextBatch(batchLines, BATCH_BYTES);
            if (batch.isEmpty()) {
                break;
            }
            channel.write(LogBatch.newBuilder().setTaskId(logs.getTaskId()).setEpoch(logs.getEpoch())
                    .setAcknowledged(logs.getAckedSequence()).addAllChunks(batch).build());
            wrote = true;
        }
        return wrote;
    }

    /**
     * On a new connection: marks the attempt's unacknowledged lines for sending again. With
     * nothing to resend no batch would say which lines are gone from here, so one without lines
     * says it now: a master without them (another master acknowledged them) must learn it before
     * the attempt's end, or it waits for them to end the log. Writes, does not flush.
     */
    public void reconnected(Channel channel, Attempt attempt) {
        LogBuffer logs = attempt.getLogs();
        logs.resend();
        if (logs.pending() == 0 && logs.getAckedSequence() > 0) {
            channel.write(LogBatch.newBuilder().setTaskId(logs.getTaskId()).setEpoch(logs.getEpoch())
                    .setAcknowledged(logs.getAckedSequence()).build());
        }
    }

    /**
     * Takes the master's acknowledgement of the attempt's lines. When it asks for a resend (a
     * write failed, or it is a new master without them) everything unacknowledged goes again,
     * now; the master skips what it has. When it says it cut the task's log at its size limit,
     * the attempt's lines are dropped from here on instead of sent (the task runs on).
     */
    public void acknowledged(Attempt attempt, LogAck ack) {
        attempt.getLogs().ack(ack.getAckedSequence());
        if (ack.getCut()) {
            LogBuffer logs = attempt.getLogs();
            if (!logs.isCut()) {
                log.warn("task {} epoch {}: the master cut the task's log at its size limit; the attempt's lines after"
                        + " line {} are dropped, not sent", ack.getTaskId(), ack.getEpoch(), ack.getAckedSequence());
                logs.cut();
            }
        } else if (ack.getResend()) {
            log.info("master asks to resend the log of task {} after line {}", ack.getTaskId(), ack.getAckedSequence());
            attempt.getLogs().resend();
            flush();
        }
    }

    /**
     * The master's log holds a newer attempt of the task: it will never take this one's lines.
     * Kept, they would stay in memory and go again at every reconnect, so they are dropped.
     */
    public void refused(Attempt attempt) {
        LogBuffer logs = attempt.getLogs();
        log.info("task {} epoch {}: the master's log has moved on to a newer attempt; the {} lines of this one it"
                + " has not taken are dropped", logs.getTaskId(), logs.getEpoch(), logs.pending());
        logs.ack(logs.getLastSequence());
    }
}
