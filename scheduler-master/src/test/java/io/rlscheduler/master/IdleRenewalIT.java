package io.rlscheduler.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.google.protobuf.MessageLite;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.sync.RedisCommands;
import io.netty.channel.EventLoopGroup;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.core.internal.WorkerSession;
import io.rlscheduler.protocol.Heartbeat;
import io.rlscheduler.protocol.HeartbeatAck;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.RunningTask;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The master renews the liveness lease of the idle workers whose heartbeats it receives, and says
 * so in the acknowledgement; a worker it must not renew for (one that names a running task, holds
 * reservations, or whose session is no longer the registered one) gets an acknowledgement without
 * a deadline and its lease untouched. Real sockets, real Redis.
 */
class IdleRenewalIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final byte[] SECRET = "idle-renewal-test-shared-secret".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    private TestRedis redis;
    private RedisNamespace ns;
    private RedisCommands<String, String> commands;
    private SchedulerMaster master;
    private EventLoopGroup group;
    private LeaseCore core;

    @BeforeEach
    void setUp(TestRedis redis, RedisNamespace ns, RedisClient client) {
        this.redis = redis;
        this.ns = ns;
        this.commands = client.connect().sync();
        CoreOptions options = CoreOptions.builder().namespace(ns.name()).heartbeatInterval(Duration.ofSeconds(1))
                .livenessLease(Duration.ofMinutes(1)).taskLease(Duration.ofMinutes(2)).build();
        this.core = LeaseCore.create(client, options);
        group = NettyTransport.nio().newGroup(1, "test-peers");
        master = SchedulerMaster.builder().redis(redis.getUri()).secret(SECRET)
                .options(MasterOptions.builder().bindHost("127.0.0.1").rpcPort(0).coreOptions(options)
                        .logDirectory(dir.resolve("logs")).workerIdleTimeout(Duration.ofSeconds(30)).build())
                .build().start();
    }

    @AfterEach
    void tearDown() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        if (master != null) {
            master.close();
        }
        core.close();
    }

    private RawWorker worker(String id) {
        core.register(new WorkerRegistration(id, id + "-session", Map.of(), 8, 1L << 30, List.of())).join();
        return RawWorker.authenticated(group, master.getRpcAddress(), SECRET, id);
    }

    private long liveness(String id) {
        Double score = commands.zscore(ns.key("liveness"), id);
        return score == null ? 0 : score.longValue();
    }

    private static HeartbeatAck ack(RawWorker peer, long sequence) {
        await().atMost(Duration.ofSeconds(10)).until(() -> peer.has(m -> m instanceof HeartbeatAck a && a.getSequence() == sequence));
        for (MessageLite m : peer.received) {
            if (m instanceof HeartbeatAck a && a.getSequence() == sequence) {
                return a;
            }
        }
        throw new AssertionError("no acknowledgement of " + sequence);
    }

    private static Heartbeat idle(String id, long sequence) {
        return Heartbeat.newBuilder().setWorkerId(id).setSessionId(id + "-session").setSequence(sequence).build();
    }

    @Test
    void anIdleWorkersHeartbeatRenewsItsLivenessAndTheAcknowledgementSaysUntilWhen() {
        RawWorker w = worker("w1");
        long registered = liveness("w1");
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(5)).until(() -> {
            long sequence = w.received.size() + 1L;
            w.send(idle("w1", sequence));
            return ack(w, sequence).getLivenessRenewedUntilUnixMs() > registered;
        });
        HeartbeatAck last = null;
        for (MessageLite m : w.received) {
            if (m instanceof HeartbeatAck a) {
                last = a;
            }
        }
        assertThat(last).isNotNull();
        assertThat(liveness("w1")).as("the deadline in Redis is the one the acknowledgement gave")
                .isEqualTo(last.getLivenessRenewedUntilUnixMs());
        assertThat(commands.hget(ns.key("workers:beat"), "w1")).startsWith("w1-session|");

        // Many idle workers at once: each acknowledgement carries its own worker's new deadline.
        List<RawWorker> peers = new java.util.ArrayList<>();
        for (int i = 0; i < 20; i++) {
            peers.add(worker("p" + i));
        }
        for (int i = 0; i < 20; i++) {
            peers.get(i).send(idle("p" + i, 1));
        }
        for (int i = 0; i < 20; i++) {
            long until = ack(peers.get(i), 1).getLivenessRenewedUntilUnixMs();
            assertThat(until).as("p%d", i).isPositive().isEqualTo(liveness("p" + i));
        }
    }

    @Test
    void aWorkerTheMasterMustNotRenewForGetsNoDeadlineAndItsLeaseIsLeftAlone() {
        // Names a running task: its own heartbeat renews its leases, not the master.
        RawWorker busy = worker("busy");
        long before = liveness("busy");
        busy.send(Heartbeat.newBuilder().setWorkerId("busy").setSessionId("busy-session").setSequence(1)
                .addRunningTasks(RunningTask.newBuilder().setTaskId("t-x").setEpoch(1)).build());
        assertThat(ack(busy, 1).getLivenessRenewedUntilUnixMs()).isZero();
        assertThat(liveness("busy")).isEqualTo(before);

        // Holds a reservation in Redis but names no task: the full heartbeat, which repairs
        // reservations against what the worker reports, is the worker's own, not the master's.
        RawWorker holder = worker("holder");
        // Submitted and claimed in one script run: the master's own dispatch round, which the
        // submission's event starts, would otherwise race this claim for the task.
        Assignment a = core.submitAndClaim(TaskDefinition.builder("t-held").build(),
                List.of(new WorkerSession("holder", "holder-session")), 1, "claim-holder", null)
                .join().getClaims().get(0).getAssignments().get(0);
        core.acknowledge(new TaskLease(a.getTaskId(), a.getEpoch()), "holder", "holder-session").join();
        long holderBefore = liveness("holder");
        holder.send(idle("holder", 1));
        assertThat(ack(holder, 1).getLivenessRenewedUntilUnixMs()).isZero();
        assertThat(liveness("holder")).isEqualTo(holderBefore);
        assertThat(commands.hexists(ns.key("workers:res:holder"), "t-held")).isTrue();

        // Registered again by another process under the same id: the connected session is stale.
        RawWorker stale = worker("stale");
        core.register(new WorkerRegistration("stale", "another-session", Map.of(), 8, 1L << 30, List.of())).join();
        long staleBefore = liveness("stale");
        stale.send(idle("stale", 1));
        assertThat(ack(stale, 1).getLivenessRenewedUntilUnixMs()).isZero();
        assertThat(liveness("stale")).isEqualTo(staleBefore);
        assertThat(commands.hget(ns.key("workers:beat"), "stale")).startsWith("another-session|");
    }
}
