package io.rlscheduler.examples;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.netty.channel.EventLoopGroup;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.TaskTransition;
import io.rlscheduler.master.HelloClient;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.master.WorkerUsage;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.RejectReason;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.SchedulerWorker;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A peer that holds the shared secret says hello with the id of a live worker and a session of
 * its own, again and again, over a real socket while the real worker (a real python3 run) works:
 * each hello is refused DUPLICATE_SESSION, the real worker keeps its one connection, and a task
 * submitted meanwhile runs on it at its first assignment.
 */
class ImpostorIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final int TRIES = 20;

    @TempDir
    Path dir;

    private Cluster cluster;
    private EventLoopGroup group;
    private final ListAppender<ILoggingEvent> handshakes = new ListAppender<>();
    private final Logger handshakeLog = (Logger) LoggerFactory.getLogger("io.rlscheduler.master.internal.Handshake");

    @BeforeEach
    void start(TestRedis redis, RedisNamespace ns) {
        // Leases long enough that a loaded machine does not lose one: a lost first assignment
        // shows as a second attempt after the acknowledgement timeout, whatever its length.
        cluster = new Cluster(redis, ns, dir, CoreOptions.builder().namespace(ns.name()).heartbeatInterval(Duration.ofMillis(500))
                .livenessLease(Duration.ofSeconds(5)).taskLease(Duration.ofSeconds(20)).ackTimeout(Duration.ofSeconds(5)).build());
        group = NettyTransport.nio().newGroup(1, "impostor");
        handshakes.start();
        handshakeLog.addAppender(handshakes);
    }

    @AfterEach
    void stop() {
        handshakeLog.detachAppender(handshakes);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        cluster.close();
    }

    /** The master's log lines of connections admitted for {@code workerId}. */
    private List<String> admitted(String workerId) {
        return handshakes.list.stream().map(ILoggingEvent::getFormattedMessage)
                .filter(m -> m.startsWith("worker " + workerId + " ") && (m.contains("connected from") || m.contains("reconnected")))
                .toList();
    }

    @Test
    void aSecondSessionWithALiveWorkersIdIsRefusedAndTheRealWorkerKeepsItsConnectionAndItsTask() throws Exception {
        SchedulerWorker real = cluster.worker("w1", 0);
        await().atMost(Duration.ofSeconds(20)).until(real::isConnected);
        assertThat(admitted("w1")).hasSize(1);

        byte[] secret = Cluster.SECRET.getBytes(StandardCharsets.UTF_8);
        CompletableFuture<List<RejectReason>> impostor = CompletableFuture.supplyAsync(() -> {
            List<RejectReason> answers = new ArrayList<>();
            for (int i = 0; i < TRIES; i++) {
                try (HelloClient c = HelloClient.connect(group, cluster.master.getRpcAddress(),
                        HelloClient.secret(secret, "w1", "s-impostor-" + i))) {
                    answers.add(c.awaitRejected(Duration.ofSeconds(10)).getReason());
                }
            }
            return answers;
        });
        TaskHandle run = cluster.master.submit(TaskSpec.python("gpu_probe.py").taskId("probe-1").arg("--hold").arg("2")
                .gpus(1).build());

        assertThat(impostor.get(60, TimeUnit.SECONDS)).hasSize(TRIES)
                .containsOnly(RejectReason.REJECT_REASON_DUPLICATE_SESSION);
        TaskResult result = run.result().get(60, TimeUnit.SECONDS);
        assertThat(result.getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(result.getAttempts()).as("its first assignment ran").isEqualTo(1);
        assertThat(result.getRecord().getHistory()).extracting(TaskTransition::getTo)
                .containsExactly(TaskState.QUEUED, TaskState.ASSIGNED, TaskState.RUNNING, TaskState.SUCCEEDED);
        assertThat(result.getRecord().getWorkerId()).isEqualTo("w1");

        assertThat(admitted("w1")).as("the real worker's one connection, never replaced").hasSize(1);
        assertThat(real.isConnected()).isTrue();
        assertThat(cluster.master.health().getRefusedHellos(RejectReason.REJECT_REASON_DUPLICATE_SESSION)).isEqualTo(TRIES);
        assertThat(cluster.master.health().getWorkerUsage()).extracting(WorkerUsage::getSessionId)
                .containsExactly(real.getSessionId());
    }
}
