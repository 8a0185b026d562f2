package io.rlscheduler.master.internal;

import io.lettuce.core.RedisClient;
import io.netty.channel.embedded.EmbeddedChannel;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.internal.LeaderStatus;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.master.internal.log.TaskLogManager;
import io.rlscheduler.protocol.Challenge;
import io.rlscheduler.protocol.FrameFormat;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloRejected;
import io.rlscheduler.protocol.RejectReason;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import com.google.protobuf.ByteString;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A worker's handshake that crosses this master's loss of the leadership: the master that lost
 * it closes only the connections it finds in its registry, so a worker added just after must be
 * sent to the leader by the handshake itself. The handler on an EmbeddedChannel, with a real core.
 */
class HandshakeLeadershipIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private static final byte[] SECRET = "handshake-leadership-test-secret".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    @Test
    void aHandshakeThatCrossesALossOfLeadershipSendsTheWorkerToTheLeader(RedisClient client, RedisNamespace ns) {
        CoreOptions options = CoreOptions.builder().namespace(ns.name()).build();
        AtomicInteger looks = new AtomicInteger();
        try (LeaseCore core = LeaseCore.create(client, options); TaskLogManager logs = new TaskLogManager(dir)) {
            LeaderStatus self = core.acquireLeadership("m1", "127.0.0.1:1", java.time.Duration.ofMinutes(1)).join();
            // How a master that does not lead sees it (here: the leader is at 127.0.0.1:1).
            LeaderStatus other = core.observeLeadership().join();
            assertThat(self.isSelf()).isTrue();
            assertThat(other.isSelf()).isFalse();
            // Leading at the handshake's first look, deposed by its second.
            WorkerRegistry registry = new WorkerRegistry();
            Dispatcher dispatcher = new Dispatcher(core, () -> null, registry, starts -> { }, 16);
            // Registered, as a worker is before its hello; the record is read at once, so that the
            // whole handshake runs inside writeInbound.
            core.register(new io.rlscheduler.core.internal.WorkerRegistration("w1", "s1", java.util.Map.of(), 1, 1L << 30,
                    java.util.List.of())).join();
            io.rlscheduler.master.internal.auth.WorkerAuthentication auth = new io.rlscheduler.master.internal.auth.WorkerAuthentication(
                    id -> java.util.concurrent.CompletableFuture.completedFuture(core.workerKeys().helloRecord(id).join()), false,
                    registry, java.time.Duration.ofSeconds(10));
            MasterContext context = new MasterContext("m1", SECRET, options, registry, dispatcher, logs, 10_000,
                    () -> looks.getAndIncrement() == 0 ? self : other, new AttemptHolders(core.holders()::of),
                    new HolderStats(), WorkerLimits.NONE, new OpenAttemptIndex(WorkerLimits.NONE), auth, core::renewIdle);
            EmbeddedChannel channel = new EmbeddedChannel(new WorkerChannelHandler(context));
            Challenge challenge = channel.readOutbound();
            ByteString clientNonce = HandshakeProof.newNonce();
            channel.writeInbound(Hello.newBuilder().setProtocolMajor(FrameFormat.VERSION)
                    .setProtocolMinor(FrameFormat.MINOR_VERSION).setWorkerId("w1").setSessionId("s1")
                    .setClientNonce(clientNonce)
                    .setProof(HandshakeProof.helloProof(SECRET, challenge.getServerNonce(), clientNonce, "w1", "s1"))
                    .build());
            channel.runPendingTasks();

            assertThat(looks.get()).isEqualTo(2);
            Object answer = channel.readOutbound();
            assertThat(answer).isInstanceOfSatisfying(HelloRejected.class, r -> {
                assertThat(r.getReason()).isEqualTo(RejectReason.REJECT_REASON_NOT_LEADER);
                assertThat(r.getLeaderAddress()).isEqualTo("127.0.0.1:1");
            });
            assertThat(channel.isOpen()).isFalse();
            assertThat(registry.size()).as("its close took it out of the registry").isZero();
        }
    }
}
