package io.rlscheduler.master;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.lettuce.core.RedisClient;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.protocol.Challenge;
import io.rlscheduler.protocol.ErrorCode;
import io.rlscheduler.protocol.ErrorReply;
import io.rlscheduler.protocol.FrameFormat;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Heartbeat;
import io.rlscheduler.protocol.HeartbeatAck;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloAccepted;
import io.rlscheduler.protocol.HelloRejected;
import io.rlscheduler.protocol.LogAck;
import io.rlscheduler.protocol.LogBatch;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.LogStream;
import io.rlscheduler.protocol.MessageType;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolChannelInitializer;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.protocol.RejectReason;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The master's handshake over real sockets, driven by a hand-made client: only a worker that
 * proves the secret is accepted (and gets the master's proof back); everyone else is told why,
 * disconnected, and never registered.
 */
class MasterHandshakeIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final byte[] SECRET = "handshake-test-shared-secret".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path dir;

    private SchedulerMaster master;
    private EventLoopGroup group;
    private LeaseCore core;

    @BeforeEach
    void start(TestRedis redis, RedisNamespace ns, RedisClient client) {
        CoreOptions options = CoreOptions.builder().namespace(ns.name()).build();
        core = LeaseCore.create(client, options);
        master = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                .coreOptions(options).logDirectory(dir.resolve("logs"))
                .handshakeTimeout(Duration.ofSeconds(2)).build().start();
        // Workers register in Redis before they say hello (a master refuses an id it does not know).
        HelloClient.register(client, options, "w1", "s-1");
        HelloClient.register(client, options, "w-new", "s-1");
        group = NettyTransport.nio().newGroup(1, "test-client");
    }

    @AfterEach
    void stop() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        master.close();
        core.close();
    }

    /**
     * Makes worker w1 (session s-1, as the test clients say) hold a new task, claimed before it
     * connects (so this master learns the holder from the record); returns the attempt's epoch.
     */
    private long hold(String taskId) throws Exception {
        core.register(new WorkerRegistration("w1", "s-1", Map.of(), 4, 0, List.of())).get(10, TimeUnit.SECONDS);
        core.submit(TaskDefinition.builder(taskId).build()).get(10, TimeUnit.SECONDS);
        Assignment a = core.claim("w1", "s-1", 1, "claim-" + taskId).get(10, TimeUnit.SECONDS).getAssignments().get(0);
        assertThat(a.getTaskId()).isEqualTo(taskId);
        core.acknowledge(new TaskLease(taskId, a.getEpoch()), "w1", "s-1").get(10, TimeUnit.SECONDS);
        return a.getEpoch();
    }

    /** The first lines of a held task's log: its trace id and its first attempt's marker. */
    private List<String> header(String taskId, long epoch) {
        return List.of("TRACE_ID:" + master.getTask(taskId).orElseThrow().getTraceId(),
                "##RLS_ATTEMPT attempt=1 epoch=" + epoch);
    }

    @Test
    void workerWithTheSecretIsAcceptedAndGetsTheMastersProof() {
        Client c = connect((ctx, challenge) -> ctx.writeAndFlush(hello(challenge, SECRET, "w1")));
        await().atMost(Duration.ofSeconds(10)).until(() -> c.received.stream().anyMatch(m -> m instanceof HelloAccepted));
        HelloAccepted accepted = (HelloAccepted) c.received.stream().filter(m -> m instanceof HelloAccepted).findFirst().orElseThrow();
        Challenge challenge = (Challenge) c.received.get(0);
        assertThat(HandshakeProof.matches(HandshakeProof.acceptProof(SECRET, c.clientNonce, challenge.getServerNonce(),
                accepted.getMasterId()), accepted.getProof())).isTrue();
        assertThat(accepted.getHeartbeatIntervalMs()).isEqualTo(10_000);
        await().atMost(Duration.ofSeconds(5)).until(() -> master.health().getConnectedWorkers() == 1);
        c.channel.writeAndFlush(Heartbeat.newBuilder().setWorkerId("w1").setSequence(5).build());
        await().atMost(Duration.ofSeconds(5)).until(() -> c.received.stream()
                .anyMatch(m -> m instanceof HeartbeatAck ack && ack.getSequence() == 5));
        c.channel.close().syncUninterruptibly();
        await().atMost(Duration.ofSeconds(5)).until(() -> master.health().getConnectedWorkers() == 0);
    }

    @Test
    void wrongSecretIsRejectedAndNeverRegistered() {
        Client c = connect((ctx, challenge) -> ctx.writeAndFlush(
                hello(challenge, "some-other-secret-value".getBytes(StandardCharsets.UTF_8), "intruder")));
        await().atMost(Duration.ofSeconds(10)).until(() -> !c.channel.isActive());
        assertThat(c.received).anySatisfy(m -> assertThat(m).isInstanceOfSatisfying(HelloRejected.class,
                r -> assertThat(r.getReason()).isEqualTo(RejectReason.REJECT_REASON_AUTHENTICATION_FAILED)));
        assertThat(master.health().getConnectedWorkers()).isZero();
    }

    @Test
    void replayedHelloFromAnotherConnectionIsRejected() {
        Client first = connect((ctx, challenge) -> ctx.writeAndFlush(hello(challenge, SECRET, "w1")));
        await().atMost(Duration.ofSeconds(10)).until(() -> first.sentHello != null);
        Hello recorded = first.sentHello;
        Client replay = connect((ctx, challenge) -> ctx.writeAndFlush(recorded));
        await().atMost(Duration.ofSeconds(10)).until(() -> !replay.channel.isActive());
        assertThat(replay.received).anySatisfy(m -> assertThat(m).isInstanceOf(HelloRejected.class));
    }

    @Test
    void anyMessageBeforeHelloIsAnsweredNotAuthenticatedAndClosed() {
        Client c = connect((ctx, challenge) -> ctx.writeAndFlush(Heartbeat.newBuilder().setWorkerId("sneaky").build()));
        await().atMost(Duration.ofSeconds(10)).until(() -> !c.channel.isActive());
        assertThat(c.received).anySatisfy(m -> assertThat(m).isInstanceOfSatisfying(ErrorReply.class,
                e -> assertThat(e.getCode()).isEqualTo(ErrorCode.ERROR_CODE_NOT_AUTHENTICATED)));
        assertThat(master.health().getConnectedWorkers()).isZero();
    }

    @Test
    void silentConnectionIsClosedAfterTheHandshakeTimeout() {
        Client c = connect((ctx, challenge) -> { });
        await().atMost(Duration.ofSeconds(10)).until(() -> !c.channel.isActive());
        assertThat(c.received).hasSize(1).first().isInstanceOf(Challenge.class);
    }

    @Test
    void invalidIdentityIsRejected() {
        Client c = connect((ctx, challenge) -> ctx.writeAndFlush(hello(challenge, SECRET, "../etc")));
        await().atMost(Duration.ofSeconds(10)).until(() -> !c.channel.isActive());
        assertThat(c.received).anySatisfy(m -> assertThat(m).isInstanceOfSatisfying(HelloRejected.class,
                r -> assertThat(r.getReason()).isEqualTo(RejectReason.REJECT_REASON_INVALID_IDENTITY)));
    }

    @Test
    void logBatchWithATraversingTaskIdWritesNothing() throws Exception {
        Client c = connect((ctx, challenge) -> ctx.writeAndFlush(hello(challenge, SECRET, "w1")));
        await().atMost(Duration.ofSeconds(10)).until(() -> c.received.stream().anyMatch(m -> m instanceof HelloAccepted));
        c.channel.writeAndFlush(chunkBatch("../../escape", 1, 1, "pwned\n"));
        await().atMost(Duration.ofSeconds(5)).until(() -> c.received.stream().anyMatch(m -> m instanceof ErrorReply));
        assertThat(c.channel.isActive()).as("a bad request is refused, the connection serves on").isTrue();
        try (var files = Files.walk(dir)) {
            assertThat(files.filter(Files::isRegularFile).toList()).isEmpty();
        }
        assertThat(Files.exists(dir.resolve("escape.log"))).isFalse();
    }

    @Test
    void malformedLogChunkIsRefusedWithATypedErrorAndWritesNothing() throws Exception {
        long epoch = hold("t-chunk");
        Client c = connect((ctx, challenge) -> ctx.writeAndFlush(hello(challenge, SECRET, "w1")));
        await().atMost(Duration.ofSeconds(10)).until(() -> c.received.stream().anyMatch(m -> m instanceof HelloAccepted));
        c.channel.writeAndFlush(LogBatch.newBuilder().setTaskId("t-chunk").setEpoch(epoch)
                .addChunks(LogChunk.newBuilder().setFirstSequence(1).setText(ByteString.copyFromUtf8("no LF at the end")))
                .build());
        await().atMost(Duration.ofSeconds(5)).until(() -> c.received.stream().anyMatch(m -> m instanceof ErrorReply));
        assertThat(c.received).filteredOn(m -> m instanceof ErrorReply).first()
                .isInstanceOfSatisfying(ErrorReply.class, e -> {
                    assertThat(e.getCode()).isEqualTo(ErrorCode.ERROR_CODE_INVALID_REQUEST);
                    assertThat(e.getTaskId()).isEqualTo("t-chunk");
                    assertThat(e.getMessage()).contains("LF");
                });
        assertThat(c.channel.isActive()).as("a bad request is refused, the connection serves on").isTrue();
        assertThat(dir.resolve("logs").resolve("t-chunk.log")).doesNotExist();
    }

    @Test
    void workerOfAMinorBeforeTheFirstReleaseIsRefusedAsUnsupportedVersion() {
        for (int minor = 0; minor < FrameFormat.MIN_MINOR_VERSION; minor++) {
            int announced = minor;
            Client c = connect((ctx, challenge) -> ctx.writeAndFlush(hello(challenge, SECRET, "w-old", announced)));
            await().atMost(Duration.ofSeconds(10)).until(() -> !c.channel.isActive());
            assertThat(c.received).noneMatch(m -> m instanceof HelloAccepted);
            assertThat(c.received).anySatisfy(m -> assertThat(m).isInstanceOfSatisfying(HelloRejected.class, r -> {
                assertThat(r.getReason()).isEqualTo(RejectReason.REJECT_REASON_UNSUPPORTED_VERSION);
                assertThat(r.getMessage()).contains("1." + announced);
            }));
        }
        assertThat(master.health().getConnectedWorkers()).isZero();
    }

    @Test
    void logChunksAreWrittenAndAcknowledgedAndLinesAlreadyWrittenAreSkipped() throws Exception {
        long epoch = hold("t-chunks");
        Client c = connect((ctx, challenge) -> ctx.writeAndFlush(hello(challenge, SECRET, "w1")));
        HelloAccepted accepted = awaitAccepted(c);
        assertThat(accepted.getProtocolMinor()).isEqualTo(FrameFormat.MINOR_VERSION);
        assertThat(((Challenge) c.received.get(0)).getProtocolMinor()).isEqualTo(FrameFormat.MINOR_VERSION);

        c.channel.writeAndFlush(LogBatch.newBuilder().setTaskId("t-chunks").setEpoch(epoch)
                .addChunks(chunk(1, LogStream.LOG_STREAM_STDOUT, "first\nleft\rright\n"))
                .addChunks(chunk(3, LogStream.LOG_STREAM_STDERR, "caf\u00e9 \u4e2d\u6587 \u2713\n"))
                .build());
        awaitLogAck(c, "t-chunks", 3);
        Path file = dir.resolve("logs").resolve("t-chunks.log");
        List<String> expected = java.util.stream.Stream.concat(header("t-chunks", epoch).stream(),
                java.util.stream.Stream.of("first", "left right", "caf\u00e9 \u4e2d\u6587 \u2713")).toList();
        assertThat(Files.readAllLines(file, StandardCharsets.UTF_8)).containsExactlyElementsOf(expected);

        // Resent after a reconnect: the lines the master has are skipped.
        c.channel.writeAndFlush(LogBatch.newBuilder().setTaskId("t-chunks").setEpoch(epoch)
                .addChunks(chunk(3, LogStream.LOG_STREAM_STDERR, "caf\u00e9 \u4e2d\u6587 \u2713\n"))
                .addChunks(chunk(4, LogStream.LOG_STREAM_STDOUT, "fourth\n"))
                .build());
        awaitLogAck(c, "t-chunks", 4);
        assertThat(Files.readAllLines(file, StandardCharsets.UTF_8)).containsExactlyElementsOf(
                java.util.stream.Stream.concat(expected.stream(), java.util.stream.Stream.of("fourth")).toList());
        assertThat(c.received).noneMatch(m -> m instanceof ErrorReply);
        assertThat(c.channel.isActive()).isTrue();
    }

    @Test
    void batchBeyondAGapIsAnsweredWithOneResendRequestPerAcknowledgedLine() throws Exception {
        // Acknowledging the old value alone would leave a worker on a live connection waiting for
        // a reconnect that never comes, and the attempt's log would stall.
        long epoch = hold("t-gap");
        Client c = connect((ctx, challenge) -> ctx.writeAndFlush(hello(challenge, SECRET, "w1")));
        awaitAccepted(c);
        c.channel.writeAndFlush(chunkBatch("t-gap", epoch, 1, "one\ntwo\n"));
        awaitLogAck(c, "t-gap", 2);
        assertThat(logAcks(c, "t-gap")).noneMatch(LogAck::getResend);

        // Lines 3 and 4 never arrived: the batch at 5 asks for them.
        c.channel.writeAndFlush(chunkBatch("t-gap", epoch, 5, "five\n"));
        await().atMost(Duration.ofSeconds(5)).until(() -> logAcks(c, "t-gap").size() == 2);
        assertThat(logAcks(c, "t-gap").get(1)).satisfies(ack -> {
            assertThat(ack.getAckedSequence()).isEqualTo(2);
            assertThat(ack.getResend()).isTrue();
        });
        // A batch beyond the same gap, sent before the worker saw the request: no second request.
        c.channel.writeAndFlush(chunkBatch("t-gap", epoch, 6, "six\n"));
        await().atMost(Duration.ofSeconds(5)).until(() -> logAcks(c, "t-gap").size() == 3);
        assertThat(logAcks(c, "t-gap").get(2)).satisfies(ack -> {
            assertThat(ack.getAckedSequence()).isEqualTo(2);
            assertThat(ack.getResend()).isFalse();
        });
        // The resend fills the gap; the lines already on their way come again and are skipped.
        c.channel.writeAndFlush(chunkBatch("t-gap", epoch, 3, "three\nfour\nfive\nsix\n"));
        awaitLogAck(c, "t-gap", 6);
        Path file = dir.resolve("logs").resolve("t-gap.log");
        assertThat(Files.readAllLines(file, StandardCharsets.UTF_8)).containsExactlyElementsOf(java.util.stream.Stream.concat(
                header("t-gap", epoch).stream(), java.util.stream.Stream.of("one", "two", "three", "four", "five", "six")).toList());
        // A new gap later is asked for again.
        c.channel.writeAndFlush(chunkBatch("t-gap", epoch, 9, "nine\n"));
        await().atMost(Duration.ofSeconds(5)).until(() -> logAcks(c, "t-gap").size() == 5);
        assertThat(logAcks(c, "t-gap").get(4)).satisfies(ack -> {
            assertThat(ack.getAckedSequence()).isEqualTo(6);
            assertThat(ack.getResend()).isTrue();
        });
        assertThat(c.received).noneMatch(m -> m instanceof ErrorReply);
    }

    @Test
    void aBatchThatCannotBeWrittenIsAskedForAgainUntilItIs() throws Exception {
        // The task's log path is a directory: every write of it fails, as on a full disk.
        long epoch = hold("t-fail");
        Path blocked = Files.createDirectories(dir.resolve("logs").resolve("t-fail.log"));
        Client c = connect((ctx, challenge) -> ctx.writeAndFlush(hello(challenge, SECRET, "w1")));
        awaitAccepted(c);
        c.channel.writeAndFlush(chunkBatch("t-fail", epoch, 1, "one\ntwo\n"));
        await().atMost(Duration.ofSeconds(10)).until(() -> !logAcks(c, "t-fail").isEmpty());
        assertThat(logAcks(c, "t-fail")).singleElement().satisfies(ack -> {
            assertThat(ack.getResend()).isTrue();
            assertThat(ack.getAckedSequence()).as("acknowledges nothing new").isZero();
        });
        // Room again: the resent batch is written and acknowledged.
        Files.delete(blocked);
        c.channel.writeAndFlush(chunkBatch("t-fail", epoch, 1, "one\ntwo\n"));
        awaitLogAck(c, "t-fail", 2);
        assertThat(Files.readAllLines(blocked, StandardCharsets.UTF_8)).containsExactlyElementsOf(java.util.stream.Stream.concat(
                header("t-fail", epoch).stream(), java.util.stream.Stream.of("one", "two")).toList());
        assertThat(c.channel.isActive()).isTrue();
    }

    private static LogBatch chunkBatch(String taskId, long epoch, long first, String text) {
        return LogBatch.newBuilder().setTaskId(taskId).setEpoch(epoch).addChunks(chunk(first, LogStream.LOG_STREAM_STDOUT, text))
                .build();
    }

    private static LogChunk chunk(long first, LogStream stream, String text) {
        return LogChunk.newBuilder().setFirstSequence(first).setStream(stream).setTimestampUnixMs(1_700_000_000_000L)
                .setText(ByteString.copyFromUtf8(text)).build();
    }

    private static List<LogAck> logAcks(Client c, String taskId) {
        return c.received.stream().filter(m -> m instanceof LogAck ack && ack.getTaskId().equals(taskId))
                .map(m -> (LogAck) m).toList();
    }

    @Test
    void newerWorkerIsAnsweredTheMastersOwnMinor() {
        Client c = connect((ctx, challenge) -> ctx.writeAndFlush(hello(challenge, SECRET, "w-new", FrameFormat.MINOR_VERSION + 5)));
        assertThat(awaitAccepted(c).getProtocolMinor()).isEqualTo(FrameFormat.MINOR_VERSION);
    }

    private static HelloAccepted awaitAccepted(Client c) {
        await().atMost(Duration.ofSeconds(10)).until(() -> c.received.stream().anyMatch(m -> m instanceof HelloAccepted));
        return (HelloAccepted) c.received.stream().filter(m -> m instanceof HelloAccepted).findFirst().orElseThrow();
    }

    private static void awaitLogAck(Client c, String taskId, long sequence) {
        await().atMost(Duration.ofSeconds(5)).until(() -> c.received.stream().anyMatch(m -> m instanceof LogAck ack
                && ack.getTaskId().equals(taskId) && ack.getAckedSequence() == sequence));
    }

    private Hello hello(Challenge challenge, byte[] secret, String workerId) {
        return hello(challenge, secret, workerId, FrameFormat.MINOR_VERSION);
    }

    private Hello hello(Challenge challenge, byte[] secret, String workerId, int minor) {
        ByteString clientNonce = HandshakeProof.newNonce();
        lastClient.clientNonce = clientNonce;
        Hello hello = Hello.newBuilder().setProtocolMajor(1).setProtocolMinor(minor).setWorkerId(workerId).setSessionId("s-1")
                .setClientNonce(clientNonce)
                .setProof(HandshakeProof.helloProof(secret, challenge.getServerNonce(), clientNonce,
                        workerId, "s-1"))
                .build();
        lastClient.sentHello = hello;
        return hello;
    }

    private Client lastClient;

    private Client connect(BiConsumer<ChannelHandlerContext, Challenge> onChallenge) {
        Client client = new Client(onChallenge);
        lastClient = client;
        client.channel = new Bootstrap().group(group).channel(NettyTransport.nio().clientChannel())
                .handler(new ProtocolChannelInitializer(ProtocolOptions.defaults(), () -> client))
                .connect(master.getRpcAddress()).syncUninterruptibly().channel();
        return client;
    }

    private static final class Client extends SimpleChannelInboundHandler<MessageLite> {
        final List<MessageLite> received = new CopyOnWriteArrayList<>();
        final BiConsumer<ChannelHandlerContext, Challenge> onChallenge;
        volatile Channel channel;
        volatile ByteString clientNonce;
        volatile Hello sentHello;

        Client(BiConsumer<ChannelHandlerContext, Challenge> onChallenge) {
            this.onChallenge = onChallenge;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, MessageLite msg) {
            received.add(msg);
            if (msg instanceof Challenge challenge) {
                onChallenge.accept(ctx, challenge);
            }
        }
    }
}
