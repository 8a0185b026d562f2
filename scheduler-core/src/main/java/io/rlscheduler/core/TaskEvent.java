package io.rlscheduler.core;

import java.util.Map;

/**
 * One entry of the event stream: a task transition or a worker event. Immutable.
 */
public final class TaskEvent {

    /** What an event is about. */
    public enum Kind {
        /** A task transition, or a notice about a task (see {@link #getKind()}). */
        TASK,
        /**
         * A worker event: its field {@code what} is registered, repaired, removed, revoked (its
         * id was revoked: masters close its connection), key_issued or key_rotated (with the
         * field {@code key}, the key id).
         */
        WORKER,
        /** A master event: its field {@code what} is leader or resigned. */
        MASTER,
        /**
         * An owner event: its field {@code owner} names the owner ({@code *} for the lab's
         * defaults), {@code what} is limits (they were set: masters claim again).
         */
        OWNER,
        /**
         * Events this subscriber had not read were trimmed from the stream (see
         * {@code EventSubscription}): the fields are {@code after}, the last event delivered
         * before (its stream id, which is also this event's), and {@code next}, the entry the
         * events delivered go on from (the oldest the stream held at that read). Transitions
         * between the two may be lost to the listener; a listener that keeps state from events
         * re-reads it from Redis.
         */
        GAP,
        /** An entry of a type this version does not know (written by a newer one). */
        OTHER;

        static Kind of(String type) {
            switch (type) {
                case "task":
                    return TASK;
                case "worker":
                    return WORKER;
                case "master":
                    return MASTER;
                case "owner":
                    return OWNER;
                case "gap": // written by the subscription, never to the stream
                    return GAP;
                default:
                    return OTHER;
            }
        }
    }

    /** Who caused a task event (its field {@code via}). */
    public enum Via {
        /** A submission queued the task. */
        SUBMIT,
        /** A claim assigned it to a worker. */
        CLAIM,
        /** Its worker acknowledged it (it runs) or recorded how its attempt ended. */
        WORKER,
        /** A cancel ended it, or (a notice) asked its worker to stop it. */
        CANCEL,
        /** The reaper took it back: a lease or the acknowledgement deadline ran out. */
        REAPER,
        /** Its worker registered again with a new session, so the old session's task was taken back. */
        REGISTER,
        /** A notice: no registered worker could run it, claims pass it over. */
        PARK,
        /** A notice: a worker that can run it registered, it is back in its place in the queue. */
        UNPARK,
        /** A notice: it waited longer than the lab's reserveAfter, and a worker was reserved for it. */
        RESERVE,
        /** Its worker's id was revoked (a lost or stolen machine), so the task was taken back from it. */
        REVOKE,
        /** Not a task event, or one that names no cause. */
        NONE,
        /** A cause this version does not know (written by a newer one). */
        OTHER;

        static Via of(String via) {
            switch (via) {
                case "submit": return SUBMIT;
                case "claim": return CLAIM;
                case "worker": return WORKER;
                case "cancel": return CANCEL;
                case "reaper": return REAPER;
                case "register": return REGISTER;
                case "revoke": return REVOKE;
                case "park": return PARK;
                case "unpark": return UNPARK;
                case "reserve": return RESERVE;
                case "": return NONE;
                default: return OTHER;
            }
        }
    }

    private final String streamId;
    private final Kind kind;
    private final Map<String, String> fields;

    TaskEvent(String streamId, String type, Map<String, String> fields) {
        this(streamId, type, fields, true);
    }

    /** With copy false, the event keeps the map given: for a map nobody else holds. */
    TaskEvent(String streamId, String type, Map<String, String> fields, boolean copy) {
        this.streamId = streamId;
        this.kind = Kind.of(type);
        this.fields = java.util.Collections.unmodifiableMap(copy ? new java.util.LinkedHashMap<>(fields) : fields);
    }

    /**
     * Returns the event's id in the stream; pass it to {@code LeaseCore#subscribe} to resume after
     * this event. It is the stream entry's id ({@code ms-seq}), but for the events of an entry that
     * holds several transitions of one script run: all but the last of those have
     * {@code <entry id>#i}, i counted from 1 (so such an entry's events are {@code E#1},
     * {@code E#2}, ..., {@code E}).
     */
    public String getStreamId() {
        return streamId;
    }

    /**
     * Returns what the event is about. A {@link Kind#TASK} event whose {@code from} and {@code to}
     * are the same state is a notice, not a transition: its {@code via} says which
     * ({@code cancel}: a cancel was requested of a held task; {@code park}: no registered worker
     * could run the queued task, claims pass it over; {@code unpark}: a worker that could
     * registered, it is back in its place in the queue).
     */
    public Kind getKind() {
        return kind;
    }

    /**
     * Returns the event's fields as the stream holds them: task, from, to, epoch, worker,
     * attempt, reason, via, at, and on an end its worker recorded also lines and exit (task);
     * worker, session, what, at (worker); master, what, epoch, at (master); after, next (gap).
     */
    public Map<String, String> getFields() {
        return fields;
    }

    /** Returns the task id of a task event, or null. */
    public String getTaskId() {
        return fields.get("task");
    }

    /** Returns the state a task event moved to, or null for other events. */
    public TaskState getTo() {
        String to = fields.get("to");
        return to == null || to.isEmpty() ? null : TaskState.valueOf(to);
    }

    /** Returns the state a task event moved from, or null for other events. */
    public TaskState getFrom() {
        String from = fields.get("from");
        return from == null || from.isEmpty() ? null : TaskState.valueOf(from);
    }

    /** Returns the task's lease epoch a task event names, or -1 for other events. */
    public long getEpoch() {
        return number("epoch", -1);
    }

    /** Returns who caused a task event; {@link Via#NONE} for other events. */
    public Via getVia() {
        return Via.of(fields.getOrDefault("via", ""));
    }

    /** Returns the reason a task event gives (an attempt's error, for a failed end), or "". */
    public String getReason() {
        return fields.getOrDefault("reason", "");
    }

    /**
     * Returns, for the end of an attempt its worker recorded ({@code via} worker, a terminal
     * {@code to}), how many output lines the attempt printed: the sequence number its log ends
     * at. Returns -1 for every other event, and when the worker did not know.
     */
    public long getLogLines() {
        return number("lines", -1);
    }

    /** Returns the exit code of an attempt whose end its worker recorded, or null when there is none. */
    public Integer getExitCode() {
        long exit = number("exit", Long.MIN_VALUE);
        return exit == Long.MIN_VALUE ? null : (int) exit;
    }

    private long number(String field, long absent) {
        String value = fields.get(field);
        if (value == null || value.isEmpty()) {
            return absent;
        }
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException e) {
            return absent;
        }
    }

    @Override
    public String toString() {
        return "TaskEvent{" + "streamId=" + streamId + ", " + "kind=" + kind + ", " + "fields=" + fields + '}';
    }
}
