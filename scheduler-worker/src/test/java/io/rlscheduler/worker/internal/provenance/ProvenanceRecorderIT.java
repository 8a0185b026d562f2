package io.rlscheduler.worker.internal.provenance;

import io.lettuce.core.RedisClient;
import io.netty.channel.EventLoopGroup;
import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.worker.ExecutionResult;
import io.rlscheduler.worker.TaskContext;
import io.rlscheduler.worker.TaskExecution;
import io.rlscheduler.worker.TaskExecutor;
import io.rlscheduler.worker.WorkerOptions;
import io.rlscheduler.worker.internal.WorkerRuntime;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The recorder's hold against a real Redis: an in-JVM attempt's provenance is collected at its
 * start and held for its end to carry ({@link ProvenanceRecorder#take}, once); not taken, it is
 * written alone after the hold; {@link ProvenanceRecorder#flush} and
 * {@link ProvenanceRecorder#writeAlone} write at once.
 */
class ProvenanceRecorderIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private LeaseCore core;
    private EventLoopGroup loop;
    private ScheduledExecutorService timers;
    private ExecutorService taskThreads;
    private ProvenanceRecorder recorder;

    /** An in-JVM execution that runs no file and never ends by itself. */
    private static final TaskExecutor IN_JVM = (context, output) -> new TaskExecution() {
        @Override
        public CompletableFuture<ExecutionResult> completion() {
            return new CompletableFuture<>();
        }

        @Override
        public void stop(io.rlscheduler.worker.StopReason reason, Duration grace) {
        }
    };

    @BeforeEach
    void open(RedisClient client, RedisNamespace ns) {
        core = LeaseCore.create(client, CoreOptions.builder().namespace(ns.name()).build());
        loop = NettyTransport.nio().newGroup(1, "provenance-it");
        timers = Executors.newSingleThreadScheduledExecutor();
        taskThreads = Executors.newCachedThreadPool();
        WorkerOptions options = WorkerOptions.builder().masters("127.0.0.1:1").workerId("w1").secret("a-secret-of-16-bytes-or-more").build();
        recorder = new ProvenanceRecorder(IN_JVM, new WorkerRuntime(options, "s1", core, null, loop, timers, taskThreads),
                List::of);
        core.register(new WorkerRegistration("w1", "s1", Map.of(), 8, 1L << 30, List.of())).join();
    }

    @AfterEach
    void close() throws InterruptedException {
        loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
        timers.shutdownNow();
        taskThreads.shutdownNow();
        core.close();
    }

    /** Submits, claims and acknowledges a task for w1, then starts its attempt through the recorder. */
    private TaskLease started(String taskId) {
        core.submit(TaskDefinition.builder(taskId).specJson("{\"script\":\"x.py\"}").build()).join();
        Assignment a = core.claim("w1", "s1", 1, "r-" + UUID.randomUUID()).join().getAssignments().get(0);
        TaskLease lease = new TaskLease(a.getTaskId(), a.getEpoch());
        assertThat(core.acknowledge(lease, "w1", "s1").join().isAccepted()).isTrue();
        recorder.start(new TaskContext(taskId, a.getEpoch(), a.getAttempt(), "trace", "x.py", List.of(), Map.of(),
                List.of(), Map.of(), Path.of("/nonexistent/run"), Path.of("/nonexistent/ckpt"),
                Path.of("/nonexistent/params.json"), null), null);
        return lease;
    }

    private List<AttemptProvenance> stored(String taskId) {
        return core.provenance().of(taskId).join();
    }

    @Test
    void anInJvmAttemptsProvenanceIsHeldAtItsStartAndTakenOnceByItsEnd() {
        TaskLease lease = started("t1");

        AttemptProvenance taken = recorder.take(lease);

        assertThat(taken).as("collected inline at the start and held").isNotNull();
        assertThat(taken.getTaskId()).isEqualTo("t1");
        assertThat(taken.getEpoch()).isEqualTo(lease.getEpoch());
        assertThat(taken.getWorkerId()).isEqualTo("w1");
        assertThat(recorder.take(lease)).as("taken once").isNull();
        // Taken: the sweep never writes it alone, however long after the hold.
        await().during(Duration.ofMillis(ProvenanceRecorder.HOLD_MILLIS + 3 * ProvenanceRecorder.SWEEP_MILLIS))
                .atMost(Duration.ofSeconds(10)).until(() -> stored("t1").isEmpty());
    }

    @Test
    void aProvenanceNoEndTakesIsWrittenAloneOnceHeldForTheHold() {
        TaskLease lease = started("t2");
        assertThat(stored("t2")).as("held, not written yet").isEmpty();

        await().atMost(Duration.ofSeconds(10)).until(() -> !stored("t2").isEmpty());

        assertThat(stored("t2")).singleElement().satisfies(p -> assertThat(p.getEpoch()).isEqualTo(lease.getEpoch()));
        assertThat(recorder.take(lease)).as("written alone: no end can take it any more").isNull();
    }

    @Test
    void flushWritesWhatIsHeldAndWriteAloneWhatAnEndGaveBack() {
        TaskLease flushed = started("t3");
        TaskLease given = started("t4");
        AttemptProvenance taken = recorder.take(given);
        assertThat(taken).isNotNull();

        recorder.flush();
        recorder.writeAlone(taken);

        assertThat(recorder.take(flushed)).as("flushed: no longer held").isNull();
        await().atMost(Duration.ofSeconds(10)).until(() -> !stored("t3").isEmpty() && !stored("t4").isEmpty());
        assertThat(stored("t3")).singleElement().satisfies(p -> assertThat(p.getEpoch()).isEqualTo(flushed.getEpoch()));
        assertThat(stored("t4")).singleElement().satisfies(p -> assertThat(p.getEpoch()).isEqualTo(given.getEpoch()));
    }
}
