package io.rlscheduler.master.internal;

import io.netty.channel.Channel;
import io.rlscheduler.protocol.Heartbeat;
import java.util.Map;

/** A worker with an authenticated connection to this master. Thread-safe. */
public final class ConnectedWorker {

    private final String workerId;
    private final String sessionId;
    private final Map<String, String> labels;
    private final Channel channel;
    private final long connectedAtMillis = System.currentTimeMillis();
    private volatile Heartbeat lastHeartbeat;
    private volatile long lastHeartbeatAtMillis;

    ConnectedWorker(String workerId, String sessionId, Map<String, String> labels, Channel channel) {
        this.workerId = workerId;
        this.sessionId = sessionId;
        this.labels = Map.copyOf(labels);
        this.channel = channel;
    }

    public String getWorkerId() { return workerId; }
    public String getSessionId() { return sessionId; }
    public Map<String, String> getLabels() { return labels; }
    public Channel getChannel() { return channel; }
    public long getConnectedAtMillis() { return connectedAtMillis; }
    /** Returns the last heartbeat message received on the connection, or null before the first. */
    public Heartbeat getLastHeartbeat() { return lastHeartbeat; }
    /** Returns when the last heartbeat was received (this master's clock, ms), or 0 before the first. */
    public long getLastHeartbeatAtMillis() { return lastHeartbeatAtMillis; }

    void heartbeat(Heartbeat heartbeat) {
        this.lastHeartbeatAtMillis = System.currentTimeMillis();
        this.lastHeartbeat = heartbeat;
    }
}
