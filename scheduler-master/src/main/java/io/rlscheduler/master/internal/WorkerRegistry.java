package io.rlscheduler.master.internal;

import io.netty.channel.Channel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The workers connected to this master, by worker id. A worker that reconnects replaces its
 * previous entry (whose connection is closed); a closed connection removes only its own entry,
 * never a newer one of the same worker. Thread-safe and lock-free.
 */
public final class WorkerRegistry {

    private final ConcurrentHashMap<String, ConnectedWorker> workers = new ConcurrentHashMap<>();

    /** Adds a worker; returns the entry it replaced, or null. */
    ConnectedWorker add(ConnectedWorker worker) {
        return workers.put(worker.getWorkerId(), worker);
    }

    /** Removes the worker's entry if it belongs to {@code channel}; returns whether it did. */
    boolean remove(String workerId, Channel channel) {
        ConnectedWorker current = workers.get(workerId);
        return current != null && current.getChannel() == channel && workers.remove(workerId, current);
    }

    /** Returns the connected worker with this id, or null. */
    public ConnectedWorker get(String workerId) {
        return workers.get(workerId);
    }

    /** Returns the connected workers at this moment. */
    public List<ConnectedWorker> snapshot() {
        return new ArrayList<>(workers.values());
    }

    /** Returns how many workers are connected. */
    public int size() {
        return workers.size();
    }
}
