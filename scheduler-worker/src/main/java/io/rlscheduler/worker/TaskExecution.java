package io.rlscheduler.worker;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
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

    /**
     * Returns the file this attempt runs, as resolved on this machine (absolute, symbolic links
     * followed): for the attempt's provenance, the worker takes its SHA-256 and asks git for the
     * commit and state of the work tree it lies in, after the attempt started and without holding
     * it up. {@link PythonTaskExecutor} returns the script it started. The default, for an executor
     * that runs no file (its work inside this JVM), is empty: the provenance then holds only the
     * worker's hostname and the attempt's GPUs.
     */
    default Optional<Path> getScriptFile() {
        return Optional.empty();
    }

    /**
     * Returns the program that runs {@link #getScriptFile()}, as a command name looked up on the
     * worker's PATH or a path: for the attempt's provenance, the worker records the first line it
     * prints for {@code --version}, asked once per interpreter and worker. {@link PythonTaskExecutor}
     * returns its python executable. Empty (the default) when none.
     */
    default Optional<String> getInterpreter() {
        return Optional.empty();
    }
}
