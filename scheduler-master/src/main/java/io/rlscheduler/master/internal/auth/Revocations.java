package io.rlscheduler.master.internal.auth;

import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.internal.HelloRecord;
import io.rlscheduler.core.internal.WorkerKeyRecord;
import io.rlscheduler.master.internal.ConnectedWorker;
import io.rlscheduler.master.internal.WorkerRegistry;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes the connections of worker ids revoked while they are connected. Every master hears a
 * revocation from the event stream (the worker event {@code what=revoked} that revoke_worker.lua
 * publishes with the mark), a moment after it was made, and closes that worker's connection here;
 * the worker cannot come back, since its hellos are refused from then on (KEY_REVOKED).
 *
 * <p>A handshake that read the worker's record before the revocation and puts the worker in the
 * registry after this closed the registry's entry is caught by {@link #heardSince}: the revocation
 * is noted before the registry is looked at, and the handshake looks here after it added the
 * worker. After a gap in the event stream (revocations among the events lost) the record of every
 * connected worker is read again. Thread-safe; events arrive on the subscription's thread.
 */
public final class Revocations implements Consumer<TaskEvent> {

    private static final Logger log = LoggerFactory.getLogger(Revocations.class);

    private final WorkerRegistry registry;
    private final Function<String, CompletableFuture<HelloRecord>> lookup;
    private final long retainNanos;
    /** Worker id -> when its revocation was heard (System.nanoTime), kept as long as a handshake may take. */
    private final Map<String, Long> heard = new ConcurrentHashMap<>();

    /**
     * @param retain how long a revocation heard is remembered for handshakes in flight: at least
     *               the handshake timeout
     */
    Revocations(WorkerRegistry registry, Function<String, CompletableFuture<HelloRecord>> lookup, Duration retain) {
        this.registry = registry;
        this.lookup = lookup;
        this.retainNanos = retain.toNanos();
    }

    @Override
    public void accept(TaskEvent event) {
        if (event.getKind() == TaskEvent.Kind.WORKER && "revoked".equals(event.getFields().get("what"))) {
            revoked(event.getFields().getOrDefault("worker", ""));
        } else if (event.getKind() == TaskEvent.Kind.GAP) {
            recheckConnected();
        }
    }

    /**
     * Returns whether a revocation of the worker id was heard at or after {@code sinceNanos}
     * ({@link System#nanoTime()}): a handshake that read the worker's record then must not accept it.
     */
    public boolean heardSince(String workerId, long sinceNanos) {
        Long at = heard.get(workerId);
        return at != null && at - sinceNanos >= 0;
    }

    private void revoked(String workerId) {
        long now = System.nanoTime();
        heard.values().removeIf(at -> now - at > retainNanos);
        heard.put(workerId, now);
        close(registry.get(workerId), "its worker id was revoked");
    }

    /** After a gap in the event stream: asks Redis whether any connected worker was revoked. */
    private void recheckConnected() {
        for (ConnectedWorker w : registry.snapshot()) {
            lookup.apply(w.getWorkerId()).whenComplete((record, error) -> {
                if (record != null && record.getKey().map(WorkerKeyRecord::isRevoked).orElse(false)) {
                    close(w, "its worker id was revoked (found after a gap in the event stream)");
                }
            });
        }
    }

    private static void close(ConnectedWorker worker, String why) {
        if (worker != null) {
            log.warn("closing the connection of worker {} (session {}): {}", worker.getWorkerId(), worker.getSessionId(), why);
            worker.getChannel().close();
        }
    }
}
