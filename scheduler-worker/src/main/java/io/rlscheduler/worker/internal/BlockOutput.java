package io.rlscheduler.worker.internal;

import io.rlscheduler.protocol.LogStream;
import io.rlscheduler.worker.TaskOutput;

/**
 * A {@link TaskOutput} that also takes lines a block at a time, as the process runner reads them:
 * the worker's own output sink, which keeps and sends them in that form. Other sinks get one
 * {@link TaskOutput#line} call per line.
 */
public interface BlockOutput extends TaskOutput {

    /**
     * Called with complete lines of one stream, in the order written.
     *
     * @param stream stdout or stderr
     * @param lines  the lines; immutable
     */
    void lines(LogStream stream, LineBlock lines);
}
