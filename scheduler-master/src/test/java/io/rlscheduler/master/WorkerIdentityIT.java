package io.rlscheduler.master;

import io.lettuce.core.RedisClient;
import io.netty.channel.EventLoopGroup;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.WorkerRevokedException;
import io.rlscheduler.protocol.Challenge;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Heartbeat;
import io.rlscheduler.protocol.HeartbeatAck;
import io.rlscheduler.protocol.HelloAccepted;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.RejectReason;
import io.rlscheduler.protocol.WorkerKey;
import io.rlscheduler.protocol.WorkerKeyProof;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Who may say hello as a worker, over real sockets with a real Redis, driven by hand-made
 * clients ({@link HelloClient}): a worker id is held by the one session Redis holds for it, and a
 * worker id with a key of its own is held by that key alone. Every refusal leaves the real
 * worker's connection as it was and is counted in {@code health()}.
 */
class WorkerIdentityIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final byte[] SECRET = "identity-test-shared-secret".getBytes(StandardCharsets.UTF_8);
    private static final Duration WAIT = Duration.ofSeconds(10);

    @TempDir
    Path dir;

    private TestRedis redis;
    private RedisClient client;
    private CoreOptions options;
    private SchedulerMaster master;
    private EventLoopGroup group;
    private final List<HelloClient> clients = new ArrayList<>();

    @BeforeEach
    void start(TestRedis redis, RedisNamespace ns, RedisClient client) {
        this.redis = redis;
        this.client = client;
        this.options = CoreOptions.builder().namespace(ns.name()).build();
        master = master(false);
        group = NettyTransport.nio().newGroup(1, "identity-client");
    }

    private SchedulerMaster master(boolean keysRequired) {
        return SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                .coreOptions(options).logDirectory(dir.resolve("logs-" + keysRequired)).workerKeysRequired(keysRequired)
                .handshakeTimeout(Duration.ofSeconds(5)).build().start();
    }

    @AfterEach
    void stop() {
        clients.forEach(HelloClient::close);
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        master.close();
    }

    private HelloClient connect(HelloClient.HelloMaker hello) {
        return connect(master, hello);
    }

    private HelloClient connect(SchedulerMaster to, HelloClient.HelloMaker hello) {
        HelloClient c = HelloClient.connect(group, to.getRpcAddress(), hello);
        clients.add(c);
        return c;
    }

    private void register(String workerId, String sessionId) {
        HelloClient.register(client, options, workerId, sessionId);
    }

    /** Issues the worker id a key and registers it with session s1, as a keyed worker starts. */
    private WorkerKey issueRegistered(String workerId) {
        WorkerKey key = WorkerKey.parse(master.workerKeys().issue(workerId));
        register(workerId, "s1");
        return key;
    }

    /** Connects and waits for the master's acceptance. */
    private HelloClient admitted(HelloClient.HelloMaker hello) {
        HelloClient c = connect(hello);
        c.awaitAccepted(WAIT);
        return c;
    }

    private long refused(RejectReason reason) {
        return master.health().getRefusedHellos(reason);
    }

    /** The worker answers on its connection: a heartbeat is acknowledged. */
    private static void assertServed(HelloClient c, long sequence) {
        c.channel().writeAndFlush(Heartbeat.newBuilder().setWorkerId("w1").setSequence(sequence).build());
        await().atMost(WAIT).until(() -> c.received().stream().anyMatch(m -> m instanceof HeartbeatAck a && a.getSequence() == sequence));
    }

    @Test
    void aSecondSessionWithALiveWorkersIdIsRefusedAndTheRealConnectionStays() {
        register("w1", "s1");
        HelloClient real = admitted(HelloClient.secret(SECRET, "w1", "s1"));
        for (int i = 0; i < 3; i++) {
            HelloClient impostor = connect(HelloClient.secret(SECRET, "w1", "s-other"));
            assertThat(impostor.awaitRejected(WAIT).getReason()).isEqualTo(RejectReason.REJECT_REASON_DUPLICATE_SESSION);
        }
        assertThat(real.channel().isActive()).isTrue();
        assertServed(real, 7);
        assertThat(master.health().getConnectedWorkers()).isEqualTo(1);
        assertThat(refused(RejectReason.REJECT_REASON_DUPLICATE_SESSION)).isEqualTo(3);
    }

    @Test
    void anIdRedisDoesNotKnowIsRefusedUntilItRegisters() {
        HelloClient early = connect(HelloClient.secret(SECRET, "w9", "s1"));
        assertThat(early.awaitRejected(WAIT).getReason()).isEqualTo(RejectReason.REJECT_REASON_UNKNOWN_WORKER);
        assertThat(master.health().getConnectedWorkers()).isZero();
        register("w9", "s1");
        connect(HelloClient.secret(SECRET, "w9", "s1")).awaitAccepted(WAIT);
        assertThat(refused(RejectReason.REJECT_REASON_UNKNOWN_WORKER)).isEqualTo(1);
    }

    @Test
    void theRegisteredSessionReconnectingReplacesItsOldConnection() {
        register("w1", "s1");
        HelloClient before = admitted(HelloClient.secret(SECRET, "w1", "s1"));
        HelloClient after = admitted(HelloClient.secret(SECRET, "w1", "s1"));
        await().atMost(WAIT).until(() -> !before.channel().isActive());
        assertServed(after, 1);
        assertThat(master.health().getConnectedWorkers()).isEqualTo(1);
    }

    @Test
    void aHelloWithItsKeyIsAcceptedAndTheMasterProvesItselfWithTheKey() {
        WorkerKey key = issueRegistered("w1");
        assertThat(key.getWorkerId()).isEqualTo("w1");
        HelloClient c = connect(HelloClient.key(key, "w1", "s1"));
        HelloAccepted accepted = c.awaitAccepted(WAIT);
        Challenge challenge = c.challenge().orElseThrow();
        assertThat(HandshakeProof.matches(WorkerKeyProof.acceptProof(key.acceptKey(), c.clientNonce(), challenge.getServerNonce(),
                accepted.getMasterId(), "w1", key.getKeyId()), accepted.getProof())).isTrue();
        assertServed(c, 1);
    }

    @Test
    void theKeyOfOneWorkerCannotSayHelloAsAnother() {
        WorkerKey a = WorkerKey.parse(master.workerKeys().issue("wa"));
        register("wa", "s1");
        register("wb", "s1");
        HelloClient asUnkeyed = connect(HelloClient.key(a, "wb", "s1"));
        assertThat(asUnkeyed.awaitRejected(WAIT).getReason()).isEqualTo(RejectReason.REJECT_REASON_BAD_KEY);
        master.workerKeys().issue("wb");
        HelloClient asKeyed = connect(HelloClient.key(a, "wb", "s1"));
        assertThat(asKeyed.awaitRejected(WAIT)).satisfies(r -> {
            assertThat(r.getReason()).isEqualTo(RejectReason.REJECT_REASON_BAD_KEY);
            assertThat(r.getMessage()).contains("not worker wb's current key");
        });
        // A forged signature with the right key id is refused too.
        WorkerKey forged = WorkerKey.of("wb", master.workerKeys().list().stream().filter(k -> k.getWorkerId().equals("wb"))
                .findFirst().orElseThrow().getKeyId(), new byte[32]);
        assertThat(connect(HelloClient.key(forged, "wb", "s1")).awaitRejected(WAIT).getMessage()).contains("does not verify");
        assertThat(master.health().getConnectedWorkers()).isZero();
        assertThat(refused(RejectReason.REJECT_REASON_BAD_KEY)).isEqualTo(3);
        connect(HelloClient.key(a, "wa", "s1")).awaitAccepted(WAIT);
    }

    @Test
    void theSharedSecretNoLongerServesAWorkerIdThatHasAKey() {
        register("w1", "s1");
        master.workerKeys().issue("w1");
        HelloClient c = connect(HelloClient.secret(SECRET, "w1", "s1"));
        assertThat(c.awaitRejected(WAIT)).satisfies(r -> {
            assertThat(r.getReason()).isEqualTo(RejectReason.REJECT_REASON_BAD_KEY);
            assertThat(r.getMessage()).contains("has a key of its own");
        });
    }

    @Test
    void afterARotationTheOldKeyIsRefusedWhileTheConnectionMadeWithItStays() {
        WorkerKey old = issueRegistered("w1");
        HelloClient first = admitted(HelloClient.key(old, "w1", "s1"));
        WorkerKey current = WorkerKey.parse(master.workerKeys().rotate("w1"));
        assertThat(current.getKeyId()).isNotEqualTo(old.getKeyId());
        assertThat(master.workerKeys().list()).singleElement().satisfies(k -> {
            assertThat(k.getKeyId()).isEqualTo(current.getKeyId());
            assertThat(k.getRotatedAtMillis()).isGreaterThanOrEqualTo(k.getCreatedAtMillis()).isPositive();
            assertThat(k.isRevoked()).isFalse();
        });

        assertThat(connect(HelloClient.key(old, "w1", "s1")).awaitRejected(WAIT).getReason())
                .isEqualTo(RejectReason.REJECT_REASON_BAD_KEY);
        assertThat(first.channel().isActive()).as("rotation leaves a connection made with the old key up").isTrue();
        assertServed(first, 3);
        connect(HelloClient.key(current, "w1", "s1")).awaitAccepted(WAIT);
        await().atMost(WAIT).until(() -> !first.channel().isActive());
    }

    @Test
    void aRevokedWorkersConnectionClosesAndItCannotComeBackWithAnyCredential() {
        WorkerKey key = issueRegistered("w1");
        HelloClient c = admitted(HelloClient.key(key, "w1", "s1"));
        WorkerKeyInfo revoked = master.workerKeys().revoke("w1");
        assertThat(revoked.isRevoked()).isTrue();
        assertThat(revoked.getKeyId()).isEqualTo(key.getKeyId());
        await().atMost(Duration.ofSeconds(2)).until(() -> !c.channel().isActive());
        assertThat(master.listWorkers()).as("its registration is gone").isEmpty();

        assertThatThrownBy(() -> register("w1", "s2")).hasCauseInstanceOf(WorkerRevokedException.class);
        assertThat(master.listWorkers()).isEmpty();
        assertThat(connect(HelloClient.key(key, "w1", "s1")).awaitRejected(WAIT).getReason())
                .isEqualTo(RejectReason.REJECT_REASON_KEY_REVOKED);
        assertThat(connect(HelloClient.secret(SECRET, "w1", "s1")).awaitRejected(WAIT).getReason())
                .isEqualTo(RejectReason.REJECT_REASON_KEY_REVOKED);
        assertThat(refused(RejectReason.REJECT_REASON_KEY_REVOKED)).isEqualTo(2);
        assertThatThrownBy(() -> master.workerKeys().rotate("w1")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("revoked");
    }

    @Test
    void aMasterThatRequiresKeysRefusesTheSharedSecret() {
        master.close(); // it resigns the leadership: the strict master takes it
        master = master(true);
        register("w1", "s1");
        HelloClient secret = connect(HelloClient.secret(SECRET, "w1", "s1"));
        assertThat(secret.awaitRejected(WAIT)).satisfies(r -> {
            assertThat(r.getReason()).isEqualTo(RejectReason.REJECT_REASON_BAD_KEY);
            assertThat(r.getMessage()).contains("worker keys only");
        });
        WorkerKey key = WorkerKey.parse(master.workerKeys().issue("w1"));
        connect(HelloClient.key(key, "w1", "s1")).awaitAccepted(WAIT);
        assertThat(refused(RejectReason.REJECT_REASON_BAD_KEY)).isEqualTo(1);
    }

    @Test
    void issuingTwiceIsRefusedAndTheListShowsNoSecret() {
        String material = master.workerKeys().issue("w1");
        assertThatThrownBy(() -> master.workerKeys().issue("w1")).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("rotate");
        assertThatThrownBy(() -> master.workerKeys().rotate("w2")).isInstanceOf(IllegalStateException.class);
        assertThatThrownBy(() -> master.workerKeys().issue("../w")).isInstanceOf(IllegalArgumentException.class);
        String secretPart = material.substring(material.lastIndexOf(':') + 1);
        assertThat(master.workerKeys().list().toString()).contains("w1").doesNotContain(secretPart);
    }

    @Test
    void noValueInRedisHoldsAKeysSecretPart(RedisNamespace ns) {
        List<String> secrets = new ArrayList<>();
        for (String material : List.of(master.workerKeys().issue("w1"), master.workerKeys().issue("w2"),
                master.workerKeys().rotate("w1"))) {
            secrets.add(material);
            secrets.add(material.substring(material.lastIndexOf(':') + 1));
        }
        master.workerKeys().revoke("w2");
        List<String> values = RedisValues.of(client, ns);
        assertThat(String.join("\n", values)).as("the verifier is there").contains("public");
        for (String secret : secrets) {
            assertThat(values).noneMatch(v -> v.contains(secret));
        }
    }
}
