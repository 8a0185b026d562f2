package io.rlscheduler.http.internal;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.rlscheduler.master.HealthSnapshot;
import io.rlscheduler.master.SchedulerMaster;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.ToDoubleFunction;

/**
 * The API's meters: the master's health figures as gauges, read once per scrape (one health read,
 * not one per gauge), the requests' timers by route and status, the open streams, and the JVM's.
 */
final class ApiMetrics {

    private final SchedulerMaster master;
    private final PrometheusMeterRegistry registry;
    private final AtomicReference<HealthSnapshot> health = new AtomicReference<>();

    ApiMetrics(SchedulerMaster master, PrometheusMeterRegistry registry, Streams streams) {
        this.master = master;
        this.registry = registry;
        gauge("rls.queue.depth", "tasks waiting in the queue, parked ones included", HealthSnapshot::getQueueDepth);
        gauge("rls.tasks.parked", "queued tasks no registered worker could run", HealthSnapshot::getParkedTasks);
        gauge("rls.tasks.assigned", "tasks assigned, not yet acknowledged", HealthSnapshot::getAssignedTasks);
        gauge("rls.tasks.running", "tasks running", HealthSnapshot::getRunningTasks);
        gauge("rls.workers.connected", "workers connected to this master", HealthSnapshot::getConnectedWorkers);
        gauge("rls.master.leader", "1 while this master leads", h -> h.isLeader() ? 1 : 0);
        gauge("rls.dispatch.rounds", "dispatch rounds run by this master", HealthSnapshot::getDispatchRounds);
        gauge("rls.tasks.dispatched", "tasks dispatched by this master", HealthSnapshot::getTasksDispatched);
        gauge("rls.reaper.failures", "reaper passes that failed", HealthSnapshot::getReaperFailures);
        gauge("rls.log.followers", "log follows open on this master", HealthSnapshot::getLogFollowers);
        gauge("rls.log.uploads.pending", "ended logs waiting to be copied to the store", HealthSnapshot::getLogUploadsPending);
        Gauge.builder("rls.http.streams", streams, Streams::size).description("open Server-Sent Events streams")
                .register(registry);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
    }

    private void gauge(String name, String description, ToDoubleFunction<HealthSnapshot> figure) {
        Gauge.builder(name, health, h -> h.get() == null ? Double.NaN : figure.applyAsDouble(h.get()))
                .description(description).register(registry);
    }

    /** Reads the master's health once, for the gauges of the scrape about to be made. */
    void refresh() {
        health.set(master.health());
    }

    void request(String method, String route, int status, long nanos) {
        Timer.builder("rls.http.requests").description("HTTP API requests")
                .tag("method", method).tag("route", route).tag("status", Integer.toString(status))
                .register(registry).record(nanos, TimeUnit.NANOSECONDS);
    }
}
