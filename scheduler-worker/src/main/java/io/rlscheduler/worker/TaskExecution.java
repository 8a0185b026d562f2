package io.rlscheduler.worker;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** One running attempt, as started by a {@link TaskExecutor}. Thread-safe. */
public interface TaskExecution {

    /**
     * Returns a future completed when the attempt has ended and everything it started is gone
     * (for a process: the whole process group has exited), after its last output line was passed
     * to the {@link TaskOutput}. Never completed exceptionally.
     */
    CompletableFuture<ExecutionResult> completion();

    /**
     * Asks the attempt to stop: for a process, TERM to its whole group, then KILL after
     * {@code grace}. Idempotent; the first reason given is the one reported.
     *
     * @param reason why it is stopped; must not be {@link StopReason#NONE}
     * @param grace  how long to wait between TERM and KILL
     */
    void stop(StopReason reason, Duration grace);

    /**
     * Called by the worker each time it has renewed this attempt's task lease in Redis. An
     * executor whose work runs outside this JVM uses it to self-fence without the JVM's help:
     * {@link PythonTaskExecutor} passes it to the launcher, which stops the process group when
     * keepalives stop coming (a frozen or stuck worker). Must not block. The default does nothing.
     */
    default void keepAlive() {
    }
}
