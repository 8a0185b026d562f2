package io.rlscheduler.master;

/**
 * What the master refused of workers' task-scoped frames (log batches, acknowledgements) since
 * it started, because the sending worker session did not hold the attempt they named; part of
 * {@link HealthSnapshot}. Nothing of a refused frame is written. Immutable.
 *
 * @param notHolder   frames of an attempt another worker or session holds, or that was never assigned
 * @param stale       frames of an attempt that is no longer the task's current one (races produce these)
 * @param unknownTask frames naming a task id that was never submitted
 * @param disconnects connections closed after repeated NOT_HOLDER or UNKNOWN_TASK frames
 *                    (16 on one connection)
 */
public record HolderRefusals(long notHolder, long stale, long unknownTask, long disconnects) {
}
