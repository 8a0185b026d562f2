package io.rlscheduler.master.internal;

import io.netty.channel.ChannelHandlerContext;
import io.rlscheduler.protocol.ErrorCode;
import io.rlscheduler.protocol.ErrorReply;
import io.rlscheduler.protocol.LogBatch;
import io.rlscheduler.protocol.MessageType;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The attempts (task id and epoch) one worker connection has log state open for at this master,
 * held to {@link WorkerLimits#maxOpenAttempts()}: a log batch for one more is refused with
 * {@code ERROR(LIMIT_EXCEEDED)} naming the limit, and nothing of it reaches the log manager. An
 * attempt closes when its log ends ({@link OpenAttemptIndex#attemptEnded}), when the connection
 * closes, or once the connection has sent nothing for it for {@link WorkerLimits#openAttemptTimeoutNanos()}
 * (looked for only when the limit is reached, at most every quarter of that time).
 *
 * <p>One per connection. {@link #admit} runs on the channel's event loop; {@link #ended} may come
 * from any thread (a log I/O thread), so the attempts are in a concurrent map.
 */
final class OpenAttempts {

    private static final Logger log = LoggerFactory.getLogger(OpenAttempts.class);

    /** An attempt of a task. */
    record Key(String taskId, long epoch) {
    }

    private final WorkerLimits limits;
    private final OpenAttemptIndex index;
    /** Each open attempt, and when this connection last sent a batch for it (event loop's ticker, ns). */
    private final Map<Key, Long> lastBatch = new ConcurrentHashMap<>();
    private long nextSweep;
    private boolean swept;
    private boolean closeWatched;
    private boolean refusing;

    OpenAttempts(WorkerLimits limits, OpenAttemptIndex index) {
        this.limits = limits;
        this.index = index;
    }

    /**
     * Returns whether the batch's attempt is open for this connection, opening it if the limit
     * allows; if not, answers the batch {@code ERROR(LIMIT_EXCEEDED)} and returns false. On the
     * event loop.
     */
    boolean admit(ChannelHandlerContext ctx, LogBatch batch) {
        Key key = new Key(batch.getTaskId(), batch.getEpoch());
        long now = ctx.executor().ticker().nanoTime();
        if (lastBatch.replace(key, now) != null) {
            return true;
        }
        if (lastBatch.size() >= limits.maxOpenAttempts() && !sweep(now)) {
            refuse(ctx, batch);
            return false;
        }
        lastBatch.put(key, now);
        index.opened(key, this);
        refusing = false;
        if (!closeWatched) {
            closeWatched = true;
            ctx.channel().closeFuture().addListener(closed -> closeAll());
        }
        return true;
    }

    /** The attempt's log ended: it is no longer open here. Any thread. */
    void ended(Key key) {
        lastBatch.remove(key);
    }

    /** Returns how many attempts are open. */
    int size() {
        return lastBatch.size();
    }

    /**
     * Closes the attempts this connection has not sent for within the timeout, unless it looked
     * less than a quarter of the timeout ago; returns whether any closed.
     */
    private boolean sweep(long now) {
        if (swept && now - nextSweep < 0) {
            return false;
        }
        swept = true;
        nextSweep = now + limits.openAttemptTimeoutNanos() / 4;
        int closed = 0;
        for (Iterator<Map.Entry<Key, Long>> it = lastBatch.entrySet().iterator(); it.hasNext();) {
            Map.Entry<Key, Long> e = it.next();
            if (now - e.getValue() >= limits.openAttemptTimeoutNanos()) {
                it.remove();
                index.closed(e.getKey(), this);
                closed++;
            }
        }
        return closed > 0;
    }

    private void refuse(ChannelHandlerContext ctx, LogBatch batch) {
        limits.refusedOverOpenAttempts();
        String message = "this connection has log state open for " + limits.maxOpenAttempts()
                + " attempts, its limit (maxOpenAttemptsPerWorker): the batch of task " + batch.getTaskId()
                + " epoch " + batch.getEpoch() + " is refused, nothing of it written";
        if (!refusing) {
            refusing = true; // one line until an attempt is admitted again
            log.warn("connection {}: {}", ctx.channel().remoteAddress(), message);
        }
        ctx.writeAndFlush(ErrorReply.newBuilder().setCode(ErrorCode.ERROR_CODE_LIMIT_EXCEEDED).setMessage(message)
                .setTaskId(batch.getTaskId()).setEpoch(batch.getEpoch())
                .setOffendingType(MessageType.LOG_BATCH.getCode()).setRetryable(true).build());
    }

    private void closeAll() {
        for (Key key : lastBatch.keySet()) {
            index.closed(key, this);
        }
        lastBatch.clear();
    }
}
