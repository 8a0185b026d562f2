package io.rlscheduler.core.internal;

/** Whether a heartbeat was accepted. */
public enum HeartbeatStatus {
    /** Liveness renewed. */
    OK,
    /** The worker never registered; it must register. */
    UNKNOWN_WORKER,
    /** Another session of the worker id is registered; this process must stop. */
    WRONG_SESSION;
}
