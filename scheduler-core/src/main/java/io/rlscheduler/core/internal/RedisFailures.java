package io.rlscheduler.core.internal;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisCommandTimeoutException;
import io.rlscheduler.core.IllegalTaskStateException;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.SchedulerTimeoutException;
import io.rlscheduler.core.TaskState;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The core's exception for a failed Redis call, so that a caller acts on a type, not on a
 * message: a move a lease script's transition table refused (lib.lua's {@code transition}) is an
 * {@link IllegalTaskStateException}, a command Redis did not answer in time a
 * {@link SchedulerTimeoutException}; any other failure stays as it is. Stateless.
 */
public final class RedisFailures {

    /**
     * lib.lua's refusal: {@code ILLEGAL_TRANSITION <from> -> <to> for <task id> at epoch <epoch>}.
     * Task ids and state names hold no spaces.
     */
    private static final Pattern ILLEGAL_TRANSITION =
            Pattern.compile("ILLEGAL_TRANSITION (\\S*) -> (\\S+) for (\\S+) at epoch (\\d+)");

    private RedisFailures() {
    }

    /**
     * Returns the future of a Redis call whose failure is translated as {@link #translate} does.
     *
     * @param call    the call
     * @param timeout the connection's command timeout, for the message
     */
    public static <T> CompletableFuture<T> translated(CompletionStage<T> call, Duration timeout) {
        return call.toCompletableFuture().exceptionallyCompose(e -> CompletableFuture.failedFuture(translate(e, timeout)));
    }

    /**
     * Returns the core's exception for a failed call: the failure itself (a
     * {@link CompletionException} unwrapped) unless it is a refused move or a command timeout.
     *
     * @param failure the call's failure
     * @param timeout the connection's command timeout, for the message
     */
    public static Throwable translate(Throwable failure, Duration timeout) {
        Throwable cause = unwrap(failure);
        if (cause instanceof RedisCommandTimeoutException) {
            return new SchedulerTimeoutException("Redis did not answer within " + timeout, timeout, cause);
        }
        if (cause instanceof RedisCommandExecutionException && cause.getMessage() != null) {
            IllegalTaskStateException illegal = illegalTransition(cause.getMessage(), cause);
            if (illegal != null) {
                return illegal;
            }
        }
        return cause;
    }

    /**
     * Returns the exception for one item's error in a batched script answer ({@code {r="ERROR",
     * error}} of ack.lua and finish.lua): a refused move, an argument the script refused
     * ({@code BAD_ARGUMENT}, as an {@link IllegalArgumentException}), or anything else as a
     * non-retryable {@link SchedulerException}.
     *
     * @param error the item's error text
     */
    public static RuntimeException itemError(String error) {
        IllegalTaskStateException illegal = illegalTransition(error, null);
        if (illegal != null) {
            return illegal;
        }
        if (error.startsWith("BAD_ARGUMENT ")) {
            return new IllegalArgumentException(error.substring("BAD_ARGUMENT ".length()));
        }
        return new SchedulerException("a lease script refused the call: " + error, false, null);
    }

    /** Returns the failure inside a {@link CompletionException}, or the failure itself. */
    public static Throwable unwrap(Throwable failure) {
        return failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
    }

    private static IllegalTaskStateException illegalTransition(String error, Throwable cause) {
        Matcher m = ILLEGAL_TRANSITION.matcher(error);
        if (!m.find()) {
            return null;
        }
        TaskState to = state(m.group(2));
        if (to == null) {
            return null;
        }
        return new IllegalTaskStateException(m.group(3), state(m.group(1)), to, Long.parseLong(m.group(4)), cause);
    }

    private static TaskState state(String name) {
        for (TaskState s : TaskState.values()) {
            if (s.name().equals(name)) {
                return s;
            }
        }
        return null;
    }
}
