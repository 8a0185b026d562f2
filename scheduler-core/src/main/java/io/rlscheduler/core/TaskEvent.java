package io.rlscheduler.core;

import java.util.Map;

/**
 * One entry of the event stream: a task transition or a worker event. Immutable.
 */
public final class TaskEvent {

    /**
     * The type of the event a subscription delivers when events it had not read were trimmed from
     * the stream (see {@link EventSubscription}): its fields are {@code after}, the last event
     * delivered before (its stream id, which is also this event's), and {@code next}, the entry
     * the events delivered go on from (the oldest the stream held at that read). Transitions
     * between the two may be lost to the listener; a
     * listener that keeps state from events re-reads it from Redis.
     */
    public static final String GAP = "gap";

    private final String streamId;
    private final String type;
    private final Map<String, String> fields;

    TaskEvent(String streamId, String type, Map<String, String> fields) {
        this(streamId, type, fields, true);
    }

    /** With copy false, the event keeps the map given: for a map nobody else holds. */
    TaskEvent(String streamId, String type, Map<String, String> fields, boolean copy) {
        this.streamId = streamId;
        this.type = type;
        this.fields = java.util.Collections.unmodifiableMap(copy ? new java.util.LinkedHashMap<>(fields) : fields);
    }

    /**
     * Returns the event's id in the stream; pass it to {@link LeaseCore#subscribe} to resume after
     * this event. It is the stream entry's id ({@code ms-seq}), but for the events of an entry that
     * holds several transitions of one script run: all but the last of those have
     * {@code <entry id>#i}, i counted from 1 (so such an entry's events are {@code E#1},
     * {@code E#2}, ..., {@code E}).
     */
    public String getStreamId() {
        return streamId;
    }

    /**
     * Returns 'task' for a task transition, 'worker' for a worker event (its field {@code what}:
     * registered, repaired, removed), {@value #GAP} for a gap (see {@link #GAP}). A task event
     * whose {@code from} and {@code to} are the same state is a notice, not a transition: its
     * {@code via} says which ({@code cancel}: a cancel was requested of a held task; {@code park}:
     * no registered worker could run the queued task, claims pass it over; {@code unpark}: a
     * worker that could registered, it is back in its place in the queue).
     */
    public String getType() {
        return type;
    }

    /** Returns the event's fields: task, from, to, epoch, worker, attempt, reason, at (task); worker, session, what, at (worker). */
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

    @Override
    public String toString() {
        return "TaskEvent{" + "streamId=" + streamId + ", " + "type=" + type + ", " + "fields=" + fields + '}';
    }
}
