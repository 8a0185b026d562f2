package io.rlscheduler.core;

/**
 * A worker's state, derived by the Redis clock from its liveness lease and its task leases:
 *
 * <pre>
 *  state    liveness lease  task lease(s)  meaning
 *  -------  --------------  -------------  ---------------------------------------------------
 *  IDLE     valid           none           alive with free capacity; can be claimed for
 *  RUNNING  valid           at least one   alive and running work
 *  PENDING  lost            still valid    missed heartbeats; its tasks are not re-queued yet
 *  DOWN     lost            lost           gone; its tasks are re-queued exactly once
 * </pre>
 */
public enum WorkerState {
    IDLE, RUNNING, PENDING, DOWN
}
