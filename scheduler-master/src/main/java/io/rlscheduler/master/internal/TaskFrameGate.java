package io.rlscheduler.master.internal;

import io.netty.channel.Channel;
import io.rlscheduler.protocol.ErrorCode;
import io.rlscheduler.protocol.ErrorReply;
import io.rlscheduler.protocol.MessageType;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One worker connection's check of its task-scoped frames against the attempts' holders
 * ({@link AttemptHolders}): a frame of an attempt the connection's worker session holds goes on
 * to its handling; any other is answered with a typed {@link ErrorReply} (NOT_HOLDER,
 * STALE_EPOCH or UNKNOWN_TASK), has nothing written, and is counted. After
 * {@value #REFUSALS_BEFORE_DISCONNECT} frames refused as NOT_HOLDER or UNKNOWN_TASK the
 * connection is closed: an honest worker sends neither (a stale attempt's frames, which races
 * produce, are refused without counting towards it).
 *
 * <p>While the record of an attempt this master does not know is read, later frames of the same
 * task wait behind the first, so that they are handled in the order they came. Confined to the
 * connection's event loop; the read's answer is handed back to it.
 */
final class TaskFrameGate {

    private static final Logger log = LoggerFactory.getLogger(TaskFrameGate.class);

    /** NOT_HOLDER and UNKNOWN_TASK refusals after which the connection is closed: {@value}. */
    static final int REFUSALS_BEFORE_DISCONNECT = 16;
    /** Frames that may wait for record reads on one connection; beyond, it is closed: {@value}. */
    static final int MAX_WAITING = 4096;

    /** A frame's handling once its sender is known to hold the attempt. */
    interface Admitted {
        void run();

        /** The holder could not be checked (Redis away): nothing is written; the frame is wanted again later. */
        void unchecked(Throwable why);
    }

    private record Waiting(long epoch, MessageType type, Admitted then) {
    }

    private final AttemptHolders holders;
    private final HolderStats stats;
    private final Channel channel;
    private final String workerId;
    private final String sessionId;
    private final Map<String, ArrayDeque<Waiting>> waiting = new HashMap<>();
    private int waitingCount;
    private int refusals;

    TaskFrameGate(AttemptHolders holders, HolderStats stats, Channel channel, String workerId, String sessionId) {
        this.holders = holders;
        this.stats = stats;
        this.channel = channel;
        this.workerId = workerId;
        this.sessionId = sessionId;
    }

    /** Checks a frame of the attempt (task, epoch): runs {@code then} if this worker session holds it. */
    void admit(String taskId, long epoch, MessageType type, Admitted then) {
        ArrayDeque<Waiting> queue = waiting.get(taskId);
        if (queue != null) {
            enqueue(queue, new Waiting(epoch, type, then));
            return;
        }
        AttemptHolders.Verdict v = holders.known(taskId, epoch, workerId, sessionId);
        if (v == AttemptHolders.Verdict.HOLDER) {
            then.run();
            return;
        }
        if (v != null) {
            refuse(v, taskId, epoch, type);
            return;
        }
        queue = new ArrayDeque<>();
        waiting.put(taskId, queue);
        enqueue(queue, new Waiting(epoch, type, then));
        holders.lookUp(taskId, epoch, workerId, sessionId).whenComplete((verdict, error) ->
                channel.eventLoop().execute(() -> answered(taskId, verdict, error)));
    }

    private void enqueue(ArrayDeque<Waiting> queue, Waiting w) {
        if (++waitingCount > MAX_WAITING) {
            log.warn("closing the connection of worker {} (session {}): over {} of its frames wait for task records",
                    workerId, sessionId, MAX_WAITING);
            channel.close();
            return;
        }
        queue.add(w);
    }

    /** The record read for a task came in: handles the frames that waited for it, in order. */
    private void answered(String taskId, AttemptHolders.Verdict looked, Throwable error) {
        ArrayDeque<Waiting> queue = waiting.remove(taskId);
        if (queue == null) {
            return;
        }
        waitingCount -= queue.size();
        for (Waiting w : queue) {
            if (error != null) {
                w.then().unchecked(error);
                continue;
            }
            AttemptHolders.Verdict v = holders.known(taskId, w.epoch(), workerId, sessionId);
            if (v == null) {
                v = looked; // the record did not name the attempt: the read's verdict holds for all
            }
            if (v == AttemptHolders.Verdict.HOLDER) {
                w.then().run();
            } else {
                refuse(v, taskId, w.epoch(), w.type());
            }
        }
    }

    private void refuse(AttemptHolders.Verdict v, String taskId, long epoch, MessageType type) {
        ErrorCode code = switch (v) {
            case STALE -> ErrorCode.ERROR_CODE_STALE_EPOCH;
            case UNKNOWN_TASK -> ErrorCode.ERROR_CODE_UNKNOWN_TASK;
            default -> ErrorCode.ERROR_CODE_NOT_HOLDER;
        };
        stats.refused(v);
        String message = switch (v) {
            case STALE -> "task " + taskId + " epoch " + epoch + " is not the task's current attempt";
            case UNKNOWN_TASK -> "no task " + taskId + " was submitted";
            default -> "worker " + workerId + " (session " + sessionId + ") does not hold task " + taskId + " epoch " + epoch;
        };
        channel.writeAndFlush(ErrorReply.newBuilder().setCode(code).setMessage(message).setTaskId(taskId)
                .setEpoch(epoch).setOffendingType(type.getCode()).build());
        if (v == AttemptHolders.Verdict.STALE) {
            return;
        }
        refusals++;
        if (refusals == 1) {
            log.warn("worker {} (session {}) sent {} for task {} epoch {}: refused, {}", workerId, sessionId, type,
                    taskId, epoch, v);
        }
        if (refusals == REFUSALS_BEFORE_DISCONNECT) {
            log.warn("closing the connection of worker {} (session {}): {} frames for tasks it does not hold", workerId,
                    sessionId, refusals);
            stats.disconnected();
            channel.close();
        }
    }
}
