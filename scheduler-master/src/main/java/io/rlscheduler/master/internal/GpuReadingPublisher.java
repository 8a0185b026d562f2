package io.rlscheduler.master.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import io.rlscheduler.core.internal.GpuReadingRecords;
import io.rlscheduler.protocol.GpuStatus;
import io.rlscheduler.protocol.Heartbeat;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes, while this master leads, the GPU readings of the workers connected to it (as their
 * last heartbeats said) to Redis, so that every master reads them, a standby's HTTP API included.
 * Run every {@code gpuReadingInterval} on the master's timer thread; writes only readings that
 * changed and removes those of workers that left, so an idle lab costs one renewal per period.
 * Readings are encoded as a JSON array of {@code [index, uuid, name, memoryTotalBytes,
 * memoryUsedBytes, utilizationPercent]}, one per GPU.
 */
public final class GpuReadingPublisher {

    private static final Logger log = LoggerFactory.getLogger(GpuReadingPublisher.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final GpuReadingRecords records;
    private final WorkerRegistry registry;
    private final BooleanSupplier leading;
    private final Duration ttl;
    /** What this master published last, by worker id; touched by the timer thread and the reply only. */
    private final Map<String, String> published = new HashMap<>();
    private final AtomicBoolean inFlight = new AtomicBoolean();
    private volatile boolean replace = true;

    public GpuReadingPublisher(GpuReadingRecords records, WorkerRegistry registry, BooleanSupplier leading, Duration interval) {
        this.records = records;
        this.registry = registry;
        this.leading = leading;
        this.ttl = interval.multipliedBy(3).compareTo(Duration.ofSeconds(10)) > 0 ? interval.multipliedBy(3)
                : Duration.ofSeconds(10);
    }

    /** One publication; skipped while the last one is unanswered, or when this master does not lead. */
    public void publishOnce() {
        if (!leading.getAsBoolean()) {
            replace = true;
            return;
        }
        if (!inFlight.compareAndSet(false, true)) {
            return;
        }
        Map<String, String> now = current();
        boolean replacing = replace;
        Map<String, String> changed = new LinkedHashMap<>();
        List<String> gone;
        synchronized (published) {
            if (replacing) {
                published.clear();
            }
            now.forEach((id, json) -> {
                if (!json.equals(published.get(id))) {
                    changed.put(id, json);
                }
            });
            gone = published.keySet().stream().filter(id -> !now.containsKey(id)).toList();
            published.keySet().removeAll(gone);
            published.putAll(changed);
        }
        replace = false;
        records.publish(changed, gone, replacing, ttl).whenComplete((exists, failure) -> {
            if (failure != null) {
                log.debug("publishing GPU readings failed (done anew at the next period): {}", failure.toString());
                replace = true;
            } else if (!exists && !now.isEmpty()) {
                replace = true; // the hash expired under us: write it whole next time
            }
            inFlight.set(false);
        });
    }

    private Map<String, String> current() {
        Map<String, String> readings = new HashMap<>();
        for (ConnectedWorker w : registry.snapshot()) {
            Heartbeat hb = w.getLastHeartbeat();
            if (hb == null || hb.getResources().getGpusCount() == 0) {
                continue;
            }
            ArrayNode gpus = JSON.createArrayNode();
            for (GpuStatus g : hb.getResources().getGpusList()) {
                gpus.addArray().add(g.getIndex()).add(g.getUuid()).add(g.getName()).add(g.getMemoryTotalBytes())
                        .add(g.getMemoryUsedBytes()).add(g.getUtilizationPercent());
            }
            readings.put(w.getWorkerId(), gpus.toString());
        }
        return readings;
    }
}
