package io.rlscheduler.master;

import java.util.concurrent.CompletableFuture;

/**
 * A running follow of one task's log: its consumer receives the lines written so far, then new
 * lines as they are written, then exactly one {@link LogRecord.Kind#END_OF_STREAM} record. The
 * stream never stops silently: however it ends (the task ended, the follow was closed, the
 * consumer fell too far behind to be served, the log manager shut down), the last record the
 * consumer gets is an END_OF_STREAM saying why.
 *
 * <p>Thread-safe. The consumer is called for one follow by one thread at a time, never
 * concurrently with itself, on a delivery thread of the log manager (never the caller's thread).
 */
public interface LogFollow extends AutoCloseable {

    /** Returns the id of the task being followed. */
    String getTaskId();

    /** Returns whether the END_OF_STREAM record has been handed to the consumer. */
    boolean isEnded();

    /**
     * Returns a future completed with the END_OF_STREAM record once the consumer has been given
     * it (after the consumer returned). Completed on a delivery thread; keep dependent actions
     * short. It fails instead, after the consumer got its END_OF_STREAM, when the log could not
     * be served: with {@link io.rlscheduler.store.StoreUnavailableException} when the task's log
     * is only in the artifact store and the store cannot be read.
     */
    CompletableFuture<LogRecord> whenEnded();

    /**
     * Stops the follow: lines not yet delivered are dropped and the consumer receives one
     * END_OF_STREAM record marked incomplete, asynchronously (unless it already received one).
     * Returns at once; idempotent. May be called from inside the consumer.
     */
    @Override
    void close();
}
