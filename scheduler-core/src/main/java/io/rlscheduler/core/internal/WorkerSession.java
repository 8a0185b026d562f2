package io.rlscheduler.core.internal;

import java.util.Objects;

/**
 * A worker process as the lease core knows it: its worker id and the session id it registered
 * with. The target of a claim ({@link LeaseCore#claim(java.util.List, int, String, LeaderStatus)}).
 *
 * @param workerId  the worker id
 * @param sessionId its session
 */
public record WorkerSession(String workerId, String sessionId) {

    /** Checks that neither id is null. */
    public WorkerSession {
        Objects.requireNonNull(workerId, "workerId");
        Objects.requireNonNull(sessionId, "sessionId");
    }
}
