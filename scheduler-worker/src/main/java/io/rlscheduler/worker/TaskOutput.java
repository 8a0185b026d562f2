package io.rlscheduler.worker;

import io.rlscheduler.protocol.LogStream;

/** Receives an attempt's output, one line at a time. Implementations must be thread-safe. */
@FunctionalInterface
public interface TaskOutput {

    /**
     * Called for each complete line the attempt wrote, without its line terminator. Lines of one
     * stream arrive in the order written; the two streams may interleave.
     *
     * @param stream stdout or stderr
     * @param text   the line
     */
    void line(LogStream stream, String text);
}
