package io.rlscheduler.master;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.netty.channel.EventLoopGroup;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.protocol.ErrorCode;
import io.rlscheduler.protocol.ErrorReply;
import io.rlscheduler.protocol.Heartbeat;
import io.rlscheduler.protocol.HeartbeatAck;
import io.rlscheduler.protocol.LogAck;
import io.rlscheduler.protocol.LogBatch;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.RunningTask;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The limits on authenticated workers over real sockets, against a real Redis: peers with valid
 * credentials that send too fast, open too many attempts or fall silent meet the limit, get a
 * typed answer or a close, and every other worker is served as before.
 */
class WorkerLimitsIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final byte[] SECRET = "worker-limits-test-shared-secret".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    private TestRedis redis;
    private RedisNamespace ns;
    private SchedulerMaster master;
    private EventLoopGroup group;

    private LeaseCore core;

    @BeforeEach
    void setUp(TestRedis redis, RedisNamespace ns, RedisClient client) {
        this.redis = redis;
        this.ns = ns;
        // Long leases: the test's workers are registered and hold tasks without renewing either.
        this.core = LeaseCore.create(client, CoreOptions.builder().namespace(ns.name()).heartbeatInterval(Duration.ofSeconds(1))
                .livenessLease(Duration.ofMinutes(1)).taskLease(Duration.ofMinutes(1)).build());
        group = NettyTransport.nio().newGroup(2, "test-peers");
    }

    @AfterEach
    void tearDown() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        if (master != null) {
            master.close();
        }
        core.close();
    }

    /**
     * Starts a master with heartbeats every 200 ms and the given limits; an idle timeout of 10 s
     * unless they set another, so that peers that send only what a test says stay connected.
     */
    private void start(UnaryOperator<MasterOptions.Builder> limits) {
        MasterOptions.Builder options = MasterOptions.builder().bindHost("127.0.0.1").rpcPort(0)
                .coreOptions(CoreOptions.builder().namespace(ns.name()).heartbeatInterval(Duration.ofMillis(200))
                        .livenessLease(Duration.ofSeconds(2)).taskLease(Duration.ofSeconds(4)).build())
                .logDirectory(dir.resolve("logs")).handshakeTimeout(Duration.ofSeconds(3))
                .workerIdleTimeout(Duration.ofSeconds(10));
        master = SchedulerMaster.builder().redis(redis.getUri()).secret(SECRET).options(limits.apply(options).build())
                .build().start();
    }

    /** Registers the worker in Redis, as a worker does before its hello, and connects as it. */
    private RawWorker worker(String id) {
        register(id);
        return RawWorker.authenticated(group, master.getRpcAddress(), SECRET, id);
    }

    private void register(String id) {
        core.register(new WorkerRegistration(id, id + "-session", Map.of(), 8, 1L << 30, List.of())).join();
    }

    /** Makes the worker hold a new task for each id (claimed before it connects); returns their epochs. */
    private Map<String, Long> hold(String workerId, String... taskIds) {
        register(workerId);
        Map<String, Long> epochs = new HashMap<>();
        for (String id : taskIds) {
            core.submit(TaskDefinition.builder(id).build()).join();
        }
        for (Assignment a : core.claim(workerId, workerId + "-session", taskIds.length, "claim-" + workerId).join()
                .getAssignments()) {
            epochs.put(a.getTaskId(), a.getEpoch());
            core.acknowledge(new TaskLease(a.getTaskId(), a.getEpoch()), workerId, workerId + "-session").join();
        }
        assertThat(epochs).containsOnlyKeys(taskIds);
        return epochs;
    }

    private static boolean acked(RawWorker peer, long sequence) {
        return peer.has(m -> m instanceof HeartbeatAck ack && ack.getSequence() == sequence);
    }

    /** A heartbeat of about 64 KiB: 500 running tasks with long ids. */
    private static Heartbeat bigHeartbeat(String workerId, long sequence) {
        Heartbeat.Builder hb = Heartbeat.newBuilder().setWorkerId(workerId).setSequence(sequence);
        for (int i = 0; i < 500; i++) {
            hb.addRunningTasks(RunningTask.newBuilder().setTaskId(String.format("t-%0120d", i)).setEpoch(i));
        }
        return hb.build();
    }

    @Test
    void aWorkerThatSendsFasterThanItsRateIsReadNoFasterAndOthersAreServedMeanwhile() {
        long rate = 1 << 20;
        long burst = 64 << 10;
        start(b -> b.workerInboundRate(rate).workerInboundBurst(burst));
        RawWorker flood = worker("w-flood");
        RawWorker calm = worker("w-calm");
        int beats = 48;
        long bytes = 0;
        long began = System.nanoTime();
        for (int i = 1; i <= beats; i++) {
            Heartbeat hb = bigHeartbeat("w-flood", i);
            bytes += hb.getSerializedSize();
            flood.channel().write(hb);
        }
        flood.channel().flush();

        await().atMost(Duration.ofSeconds(10)).until(() -> master.health().getThrottledReads() > 0);
        calm.send(Heartbeat.newBuilder().setWorkerId("w-calm").setSequence(1).build());
        await().atMost(Duration.ofSeconds(2)).until(() -> acked(calm, 1));
        assertThat(acked(flood, beats)).as("the flood is still being read when the calm worker is answered").isFalse();

        await().atMost(Duration.ofSeconds(30)).until(() -> acked(flood, beats));
        double seconds = (System.nanoTime() - began) / 1e9;
        double atLeast = (bytes - burst) / (double) rate;
        assertThat(seconds).as("%d bytes at %d bytes/s beyond a burst of %d", bytes, rate, burst)
                .isGreaterThanOrEqualTo(atLeast * 0.95);
        assertThat(flood.channel().isActive()).as("throttled, not closed").isTrue();
        assertThat(flood.received).noneMatch(m -> m instanceof ErrorReply);
    }

    private static LogBatch batch(String taskId, long epoch) {
        return LogBatch.newBuilder().setTaskId(taskId).setEpoch(epoch).addChunks(LogChunk.newBuilder().setFirstSequence(1)
                .setText(ByteString.copyFromUtf8("a line of " + taskId + "\n"))).build();
    }

    private static boolean refusedOverTheLimit(MessageLite m, String taskId) {
        return m instanceof ErrorReply e && e.getTaskId().equals(taskId) && e.getCode() == ErrorCode.ERROR_CODE_LIMIT_EXCEEDED;
    }

    @Test
    void aBatchForOneAttemptMoreThanAWorkerMayHaveOpenIsRefusedTypedAndWritesNothing() {
        start(b -> b.maxOpenAttemptsPerWorker(2).openAttemptTimeout(Duration.ofMillis(500)));
        Map<String, Long> epochs = hold("w-greedy", "t1", "t2", "t3");
        Map<String, Long> others = hold("w-other", "u1");
        RawWorker greedy = worker("w-greedy");
        RawWorker other = worker("w-other");
        greedy.send(batch("t1", epochs.get("t1")));
        greedy.send(batch("t2", epochs.get("t2")));
        await().atMost(Duration.ofSeconds(10)).until(() -> greedy.has(m -> m instanceof LogAck a && a.getTaskId().equals("t1"))
                && greedy.has(m -> m instanceof LogAck a && a.getTaskId().equals("t2")));
        greedy.send(batch("t3", epochs.get("t3")));
        await().atMost(Duration.ofSeconds(10)).until(() -> greedy.has(m -> refusedOverTheLimit(m, "t3")));
        ErrorReply refusal = (ErrorReply) greedy.received.stream().filter(m -> refusedOverTheLimit(m, "t3")).findFirst()
                .orElseThrow();
        assertThat(refusal.getMessage()).contains("2 attempts", "maxOpenAttemptsPerWorker");
        assertThat(dir.resolve("logs").resolve("t3.log")).as("nothing of the refused batch is written").doesNotExist();
        assertThat(master.health().getOpenAttemptRefusals()).isEqualTo(1);
        assertThat(greedy.channel().isActive()).as("refused, not closed").isTrue();

        // Another worker's attempts are its own.
        other.send(batch("u1", others.get("u1")));
        await().atMost(Duration.ofSeconds(10)).until(() -> other.has(m -> m instanceof LogAck ack && ack.getTaskId().equals("u1")));

        // Once t1 and t2 have had no batch for the open-attempt timeout, t3 is taken.
        await().pollInterval(Duration.ofMillis(200)).atMost(Duration.ofSeconds(10)).until(() -> {
            greedy.send(batch("t3", epochs.get("t3")));
            return greedy.has(m -> m instanceof LogAck ack && ack.getTaskId().equals("t3"));
        });
    }

    @Test
    void aSilentAuthenticatedConnectionIsClosedAndOneThatHeartbeatsOrHasNotAuthenticatedIsNot() {
        start(b -> b.workerIdleTimeout(Duration.ofMillis(600))); // 3 heartbeat intervals
        RawWorker beating = worker("w-beating");
        var beats = group.next().scheduleAtFixedRate(() -> beating.send(Heartbeat.newBuilder().setWorkerId("w-beating")
                .setSequence(System.nanoTime()).build()), 0, 150, TimeUnit.MILLISECONDS);
        try {
            RawWorker quiet = worker("w-quiet");
            RawWorker stranger = RawWorker.silent(group, master.getRpcAddress());

            await().atMost(Duration.ofSeconds(5)).until(() -> !quiet.channel().isActive());
            assertThat(master.health().getIdleCloses()).isEqualTo(1);
            await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(2))
                    .until(() -> beating.channel().isActive() && stranger.channel().isActive());
            // The stranger meets the handshake timeout (3 s) instead.
            await().atMost(Duration.ofSeconds(5)).until(() -> !stranger.channel().isActive());
            assertThat(beating.channel().isActive()).isTrue();
            assertThat(master.health().getIdleCloses()).isEqualTo(1);
        } finally {
            beats.cancel(false);
        }
    }
}
