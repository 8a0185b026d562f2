package io.rlscheduler.worker.internal;

import io.netty.channel.EventLoopGroup;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.worker.WorkerOptions;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;

/**
 * The parts of a started worker that its mechanisms share; the worker makes and stops them.
 *
 * @param options     the worker's settings
 * @param sessionId   the session id of this process start
 * @param core        the Redis gateway
 * @param link        the connection to a master
 * @param loop        the link's event loop (one thread): log batches, retry timers;
 *                    never blocked
 * @param timers      one thread for heartbeats and task timeouts; a heartbeat waits for Redis on it
 * @param taskThreads threads that may block: an attempt's launch and the handling of its end
 */
public record WorkerRuntime(WorkerOptions options, String sessionId, LeaseCore core, MasterLink link,
                            EventLoopGroup loop, ScheduledExecutorService timers, ExecutorService taskThreads) {

    /** Returns the worker id. */
    public String workerId() {
        return options.getWorkerId();
    }
}
