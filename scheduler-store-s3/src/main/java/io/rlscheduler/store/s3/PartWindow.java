package io.rlscheduler.store.s3;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;

/**
 * The parts of one transfer in flight on the store's threads: at most a limit at a time, their
 * results taken back in part order (which is the order a digest reads them in). Used by the one
 * thread that runs the transfer; not thread-safe.
 *
 * @param <T> what a part returns
 */
final class PartWindow<T> {

    private final ExecutorService executor;
    private final int limit;
    private final ArrayDeque<Future<T>> inFlight = new ArrayDeque<>();

    /**
     * @param executor the store's transfer threads
     * @param limit    the most parts in flight at once
     */
    PartWindow(ExecutorService executor, int limit) {
        this.executor = executor;
        this.limit = limit;
    }

    /** Returns whether as many parts are in flight as the limit allows: take the oldest first. */
    boolean isFull() {
        return inFlight.size() >= limit;
    }

    /** Returns whether no part is in flight. */
    boolean isEmpty() {
        return inFlight.isEmpty();
    }

    /**
     * Starts a part.
     *
     * @throws IllegalStateException if the window is full, or the store is closed
     */
    void submit(Callable<T> part) {
        if (isFull()) {
            throw new IllegalStateException("take the oldest part before submitting another");
        }
        try {
            inFlight.add(executor.submit(part));
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("the S3 store is closed", e);
        }
    }

    /**
     * Waits for the oldest part in flight and returns its result; its failure is thrown as it was
     * (an unchecked exception, an IOException or an error).
     *
     * @throws InterruptedException if the waiting thread is interrupted (the part stays in flight)
     */
    T takeOldest() throws IOException, InterruptedException {
        Future<T> oldest = inFlight.peekFirst();
        if (oldest == null) {
            throw new IllegalStateException("no part in flight");
        }
        try {
            T result = oldest.get();
            inFlight.removeFirst();
            return result;
        } catch (ExecutionException e) {
            inFlight.removeFirst();
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException) {
                throw (RuntimeException) cause;
            }
            if (cause instanceof IOException) {
                throw (IOException) cause;
            }
            if (cause instanceof Error) {
                throw (Error) cause;
            }
            throw new IllegalStateException("a part failed", cause);
        }
    }

    /**
     * Waits for every part still in flight to end, however it ends, so that none is still running
     * when the transfer is given up (a part landing after its upload's abort would stay behind).
     * Each part is bounded by the client's timeouts, so an interrupt does not end the wait: it is
     * returned, for the caller to restore once it has cleaned up.
     *
     * @return whether the thread was interrupted while it waited (its interrupt flag is clear)
     */
    boolean drain() {
        boolean interrupted = false;
        for (Future<T> part : inFlight) {
            while (true) {
                try {
                    part.get();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                } catch (ExecutionException | CancellationException e) {
                    break;
                }
            }
        }
        inFlight.clear();
        return interrupted;
    }
}
