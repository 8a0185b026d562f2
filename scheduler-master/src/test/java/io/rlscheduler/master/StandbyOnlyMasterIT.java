package io.rlscheduler.master;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.protocol.Challenge;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloRejected;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolChannelInitializer;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.protocol.RejectReason;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A standby-only master ({@link SchedulerMaster.Builder#standbyOnly(boolean)}): it never takes the
 * leadership lease, not even when nobody holds it, yet accepts submissions and queries, and sends
 * workers on to whoever leads.
 */
class StandbyOnlyMasterIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final byte[] SECRET = "standby-only-test-shared-secret".getBytes(StandardCharsets.UTF_8);
    private static final Duration LEASE = Duration.ofMillis(300);

    @TempDir
    Path dir;

    private TestRedis redis;
    private CoreOptions options;
    private EventLoopGroup group;

    @BeforeEach
    void setUp(TestRedis redis, RedisNamespace ns) {
        this.redis = redis;
        this.options = CoreOptions.builder().namespace(ns.name()).build();
        group = NettyTransport.nio().newGroup(1, "test-client");
    }

    @AfterEach
    void tearDown() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }

    private SchedulerMaster.Builder master(String id) {
        return SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                .coreOptions(options).logDirectory(dir.resolve("logs-" + id)).masterId(id).leaderLease(LEASE)
                .reapInterval(Duration.ofMillis(100)).dispatchInterval(Duration.ofMillis(100));
    }

    @Test
    void theResultOfATaskThatDoesNotExistFailsInsteadOfWaiting() throws Exception {
        try (SchedulerMaster api = master("api-unknown").standbyOnly(true).build().start()) {
            org.assertj.core.api.Assertions.assertThat(api.task("no-such-task").result()).failsWithin(Duration.ofSeconds(10))
                    .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                    .havingCause().isInstanceOf(io.rlscheduler.core.TaskNotFoundException.class);
        }
    }

    @Test
    void neverLeadsEvenWithoutALeaderButAcceptsSubmissionsThatTheLeaderLaterDispatches() throws Exception {
        try (SchedulerMaster api = master("api").standbyOnly(true).build().start()) {
            TaskHandle run = api.submit(TaskSpec.python("train.py").taskId("t-1").gpus(1).build());
            // Many leases long, with nobody else around to lead, it never takes the lease.
            await().during(LEASE.multipliedBy(10)).atMost(LEASE.multipliedBy(12)).until(() -> !api.isLeader());
            assertThat(api.health().isLeader()).isFalse();
            assertThat(run.getRecord().getState()).isEqualTo(TaskState.QUEUED);
            assertThat(api.queueDepth()).isEqualTo(1);
            assertThat(api.listTasks(TaskState.QUEUED, 0, 10).getTotal()).isEqualTo(1);

            Client c = connect(api, "w1");
            await().atMost(Duration.ofSeconds(10)).until(() -> !c.channel.isActive());
            assertThat(rejection(c).getReason()).isEqualTo(RejectReason.REJECT_REASON_NOT_LEADER);
            assertThat(rejection(c).getLeaderAddress()).as("nobody leads yet").isEmpty();

            try (SchedulerMaster leader = master("m1").build().start()) {
                assertThat(leader.isLeader()).as("the lease was free: the standby-only master never took it").isTrue();
                assertThat(leader.getTask("t-1")).hasValueSatisfying(r -> assertThat(r.getState()).isEqualTo(TaskState.QUEUED));
                String leaderAddress = "127.0.0.1:" + leader.getRpcAddress().getPort();
                await().atMost(Duration.ofSeconds(10)).until(() -> {
                    Client again = connect(api, "w1");
                    await().atMost(Duration.ofSeconds(10)).until(() -> !again.channel.isActive());
                    return leaderAddress.equals(rejection(again).getLeaderAddress());
                });
                assertThat(api.isLeader()).isFalse();
                TaskHandle second = api.submit(TaskSpec.python("train.py").taskId("t-2").gpus(1).build());
                assertThat(leader.task("t-2").getRecord().getState()).isEqualTo(TaskState.QUEUED);
                assertThat(second.getTaskId()).isEqualTo("t-2");
            }
            // The leader resigned on close; the lease is free again, and still not taken.
            await().during(LEASE.multipliedBy(5)).atMost(LEASE.multipliedBy(7)).until(() -> !api.isLeader());
            try (SchedulerMaster next = master("m2").build().start()) {
                assertThat(next.isLeader()).isTrue();
            }
        }
    }

    private static HelloRejected rejection(Client c) {
        return c.received.stream().filter(m -> m instanceof HelloRejected).map(m -> (HelloRejected) m)
                .findFirst().orElseThrow(() -> new AssertionError("no HelloRejected, got " + c.received));
    }

    private Client connect(SchedulerMaster master, String workerId) {
        Client client = new Client(workerId);
        client.channel = new Bootstrap().group(group).channel(NettyTransport.nio().clientChannel())
                .handler(new ProtocolChannelInitializer(ProtocolOptions.defaults(), () -> client))
                .connect(master.getRpcAddress()).syncUninterruptibly().channel();
        return client;
    }

    /** A hand-made worker that answers the challenge with a valid Hello. */
    private static final class Client extends SimpleChannelInboundHandler<MessageLite> {
        final List<MessageLite> received = new CopyOnWriteArrayList<>();
        final String workerId;
        volatile Channel channel;

        Client(String workerId) {
            this.workerId = workerId;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, MessageLite msg) {
            received.add(msg);
            if (msg instanceof Challenge challenge) {
                ByteString nonce = HandshakeProof.newNonce();
                ctx.writeAndFlush(Hello.newBuilder().setProtocolMajor(1).setProtocolMinor(io.rlscheduler.protocol.FrameFormat.MINOR_VERSION).setWorkerId(workerId).setSessionId("s-1")
                        .setClientNonce(nonce)
                        .setProof(HandshakeProof.helloProof(SECRET, challenge.getServerNonce(), nonce, workerId, "s-1"))
                        .build());
            }
        }
    }
}
