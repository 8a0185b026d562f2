package io.rlscheduler.worker;

import com.google.protobuf.ByteString;
import com.google.protobuf.MessageLite;
import io.lettuce.core.RedisClient;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.Assignment;
import io.rlscheduler.core.internal.ClaimResult;
import io.rlscheduler.core.internal.ClaimStatus;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.TaskDefinition;
import io.rlscheduler.protocol.Challenge;
import io.rlscheduler.protocol.ExecuteTask;
import io.rlscheduler.protocol.ExecuteTaskAck;
import io.rlscheduler.protocol.FrameFormat;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Heartbeat;
import io.rlscheduler.protocol.HeartbeatAck;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloAccepted;
import io.rlscheduler.protocol.LogAck;
import io.rlscheduler.protocol.LogBatch;
import io.rlscheduler.protocol.LogChunk;
import io.rlscheduler.protocol.LogStream;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolChannelInitializer;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.protocol.ResourceRequest;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The worker's log shipping against a master, over real loopback sockets, with a real Redis and a
 * real python3 process. The master is a stand-in made of the real protocol pieces (codec,
 * handshake proofs) and a real {@link LeaseCore} that submits and claims the task for the worker:
 * it sends the task as the master would and acknowledges log batches and heartbeats as the
 * master does.
 *
 * <p>Shows that the worker sends every line in chunks with sequence numbers 1..N without gap, the
 * text as printed (a CR inside a line as a space, non-ASCII intact), records the end in Redis
 * with N as the attempt's line count, and that once everything is acknowledged it keeps nothing
 * for the task (a reconnect resends no line); that it resends on the same connection what a
 * master asks for ({@code LogAck.resend}); and that a reconnect while the attempt runs, with
 * nothing left to resend, still says which lines it no longer holds.
 */
class LogShippingIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final byte[] SECRET = "log-shipping-shared-secret-bytes".getBytes(StandardCharsets.UTF_8);
    private static final String WORKER_ID = "shipping-worker";
    private static final String SCRIPT = "shipping_lines.py";
    private static final int NUMBERED_LINES = 60;

    /**
     * stdout and stderr as separate pipes: the order between the streams is not fixed, the order
     * inside each is. Written as bytes so the interpreter's locale does not matter.
     */
    private static final String SCRIPT_TEXT = String.join("\n",
            "import sys",
            "out = sys.stdout.buffer",
            "err = sys.stderr.buffer",
            "out.write(b'out first\\n')",
            "out.flush()",
            "err.write(b'err first\\n')",
            "err.flush()",
            "out.write(b'left\\rright\\n')",
            "out.write('caf\\u00e9 \\u4e2d\\u6587 \\u2713 \\U0001F600\\n'.encode('utf-8'))",
            "out.flush()",
            "for i in range(" + NUMBERED_LINES + "):",
            "    out.write(b'out %d\\n' % i)",
            "    if i % 20 == 0:",
            "        out.flush()",
            "out.flush()",
            "err.write(b'err last\\n')",
            "err.flush()",
            "");

    private static List<String> expectedStdout() {
        List<String> lines = new ArrayList<>(List.of("out first", "left right", "caf\u00e9 \u4e2d\u6587 \u2713 \uD83D\uDE00"));
        for (int i = 0; i < NUMBERED_LINES; i++) {
            lines.add("out " + i);
        }
        return lines;
    }

    private static final List<String> EXPECTED_STDERR = List.of("err first", "err last");

    @TempDir
    Path dir;

    private CoreOptions options;
    private LeaseCore core;
    private EventLoopGroup serverGroup;
    private Channel serverChannel;
    private StandIn standIn;
    private SchedulerWorker worker;

    @BeforeEach
    void start(TestRedis redis, RedisClient client, RedisNamespace ns) throws Exception {
        options = CoreOptions.builder().namespace(ns.name())
                .heartbeatInterval(Duration.ofMillis(200)).livenessLease(Duration.ofSeconds(5))
                .taskLease(Duration.ofSeconds(10)).ackTimeout(Duration.ofSeconds(10)).build();
        core = LeaseCore.create(client, options);
        Path scripts = Files.createDirectories(dir.resolve("scripts"));
        Files.writeString(scripts.resolve(SCRIPT), SCRIPT_TEXT);
        serverGroup = NettyTransport.nio().newGroup(1, "stand-in-master");
    }

    @AfterEach
    void stop() {
        if (worker != null) {
            worker.close();
        }
        if (serverChannel != null) {
            serverChannel.close().syncUninterruptibly();
        }
        if (standIn != null) {
            standIn.connections.forEach(c -> c.channel.close());
        }
        serverGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        core.close();
    }

    @Test
    void everyLineArrivesOnceInOrderAndNothingIsKeptOnceAcknowledged(TestRedis redis) throws Exception {
        standIn = new StandIn(false);
        String taskId = "lines-1";
        Started started = launch(taskId, redis);
        Connection first = started.connection();
        Assignment a = started.assignment();

        int n = expectedStdout().size() + EXPECTED_STDERR.size();
        await().atMost(Duration.ofSeconds(20)).until(() -> first.lastAcked == n
                && core.getTask(taskId).get(10, TimeUnit.SECONDS).orElseThrow().getState().isTerminal());
        assertThat(first.of(ExecuteTaskAck.class)).singleElement()
                .satisfies(ack -> assertThat(ack.getAccepted()).as(ack.getMessage()).isTrue());

        List<LogBatch> batches = first.of(LogBatch.class);
        assertThat(batches).isNotEmpty().allSatisfy(b -> {
            assertThat(b.getTaskId()).isEqualTo(taskId);
            assertThat(b.getEpoch()).isEqualTo(a.getEpoch());
            assertThat(b.getChunksCount()).isPositive();
            assertThat(b.getChunksList()).allSatisfy(c -> {
                assertThat(c.getFirstSequence()).isPositive();
                assertThat(c.getText().byteAt(c.getText().size() - 1)).as("a chunk's lines end with LF")
                        .isEqualTo((byte) '\n');
                assertThat(c.getText().toStringUtf8()).doesNotContain("\r");
            });
        });
        assertThat(batches).as("each batch says up to which line the worker no longer holds the log")
                .extracting(LogBatch::getAcknowledged).isSorted();

        // Sequence numbers 1..N in arrival order, no gap, no repeat; texts and streams as printed.
        List<Line> lines = linesOf(batches);
        assertThat(lines).extracting(Line::sequence)
                .containsExactlyElementsOf(LongStream.rangeClosed(1, n).boxed().collect(Collectors.toList()));
        assertThat(lines).filteredOn(l -> l.stream() == LogStream.LOG_STREAM_STDOUT).extracting(Line::text)
                .containsExactlyElementsOf(expectedStdout());
        assertThat(lines).filteredOn(l -> l.stream() == LogStream.LOG_STREAM_STDERR).extracting(Line::text)
                .containsExactlyElementsOf(EXPECTED_STDERR);
        // The outcome is in Redis, recorded by the worker, with the line its log ends at.
        TaskRecord record = core.getTask(taskId).get(10, TimeUnit.SECONDS).orElseThrow();
        assertThat(record.getState()).as(record.getError()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(record.getEpoch()).isEqualTo(a.getEpoch());
        assertThat(record.getLogLines()).as("the record names the attempt's last line").isEqualTo(n);

        await().atMost(Duration.ofSeconds(10)).until(() -> worker.heldAttempts() == 0);
        // The worker's buffer is empty: after a reconnect it resends no line
        // (what it resends goes out in onReady, before the first heartbeat of the connection).
        first.channel.close().syncUninterruptibly();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            Connection next = standIn.ready(first);
            return next != null && !next.of(Heartbeat.class).isEmpty();
        });
        Connection second = standIn.ready(first);
        List<MessageLite> beforeHeartbeat = second.beforeFirst(Heartbeat.class);
        assertThat(beforeHeartbeat).as("nothing left to resend").noneMatch(m -> m instanceof LogBatch);
        assertThat(second.of(Heartbeat.class).get(0).getRunningTasksList()).isEmpty();
        assertThat(worker.getRunningTaskIds()).isEmpty();
    }

    @Test
    void linesTheMasterLacksAreResentOnTheSameConnectionWhenItAsks(TestRedis redis) throws Exception {
        // Without it a master that lost a batch (a failed write) would acknowledge the same value
        // for good: the attempt's log would stall and, once maxBufferedLines waited, the task too.
        standIn = new StandIn(true);
        Started started = launch("resend-1", redis);
        Connection first = started.connection();

        int n = expectedStdout().size() + EXPECTED_STDERR.size();
        await().atMost(Duration.ofSeconds(20)).until(() -> first.lastAcked == n
                && core.getTask("resend-1").get(10, TimeUnit.SECONDS).orElseThrow().getState() == TaskState.SUCCEEDED);
        assertThat(first.lostOne).isTrue();
        assertThat(first.resendsAsked).isPositive();
        assertThat(standIn.connections).as("resent on the same connection, no reconnect").hasSize(1);
        assertThat(first.kept).extracting(Line::sequence)
                .containsExactlyElementsOf(LongStream.rangeClosed(1, n).boxed().collect(Collectors.toList()));
        assertThat(first.kept).filteredOn(l -> l.stream() == LogStream.LOG_STREAM_STDOUT).extracting(Line::text)
                .containsExactlyElementsOf(expectedStdout());
        assertThat(first.kept).filteredOn(l -> l.stream() == LogStream.LOG_STREAM_STDERR).extracting(Line::text)
                .containsExactlyElementsOf(EXPECTED_STDERR);
    }

    @Test
    void aReconnectWhileTheAttemptRunsWithNothingToResendStillSaysWhichLinesAreGone(TestRedis redis) throws Exception {
        // Every line so far was acknowledged by a master that then went away: the next master,
        // whose log lacks those lines, must learn they are gone, or it waits for them.
        standIn = new StandIn(false);
        Path release = dir.resolve("release");
        Files.writeString(dir.resolve("scripts").resolve(HOLDING_SCRIPT), SCRIPT_TEXT
                + "import os, time\nwhile not os.path.exists(" + pythonString(release.toString()) + "):\n    time.sleep(0.02)\n");
        Started started = launch("tail-1", redis, HOLDING_SCRIPT);
        Connection first = started.connection();
        int n = expectedStdout().size() + EXPECTED_STDERR.size();
        await().atMost(Duration.ofSeconds(20)).until(() -> first.lastAcked == n);
        assertThat(worker.getRunningTaskIds()).containsExactly("tail-1");

        first.channel.close().syncUninterruptibly();
        await().atMost(Duration.ofSeconds(10)).until(() -> {
            Connection next = standIn.ready(first);
            return next != null && !next.of(Heartbeat.class).isEmpty();
        });
        Connection second = standIn.ready(first);
        assertThat(second.beforeFirst(Heartbeat.class)).filteredOn(m -> m instanceof LogBatch).singleElement()
                .isInstanceOfSatisfying(LogBatch.class, b -> {
                    assertThat(b.getTaskId()).isEqualTo("tail-1");
                    assertThat(b.getChunksCount()).as("no line to resend").isZero();
                    assertThat(b.getAcknowledged()).isEqualTo(n);
                });
        Files.writeString(release, "go");
        await().atMost(Duration.ofSeconds(20)).until(() ->
                core.getTask("tail-1").get(10, TimeUnit.SECONDS).orElseThrow().getState() == TaskState.SUCCEEDED);
    }

    private static final String HOLDING_SCRIPT = "holding_lines.py";

    private static String pythonString(String text) {
        return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'";
    }

    private record Started(Connection connection, Assignment assignment) {
    }

    /**
     * Starts the stand-in's server (after {@link #standIn} is set) and the worker, then submits
     * {@code taskId}, claims it for the worker and sends it the task as the master does.
     */
    private Started launch(String taskId, TestRedis redis) throws Exception {
        return launch(taskId, redis, SCRIPT);
    }

    private Started launch(String taskId, TestRedis redis, String script) throws Exception {
        serverChannel = new ServerBootstrap().group(serverGroup).channel(NettyTransport.nio().serverChannel())
                .childHandler(new ProtocolChannelInitializer(ProtocolOptions.defaults(), standIn::newConnection))
                .bind("127.0.0.1", 0).syncUninterruptibly().channel();
        int port = ((InetSocketAddress) serverChannel.localAddress()).getPort();

        worker = SchedulerWorker.builder().masters("127.0.0.1:" + port).redis(redis.getUri())
                .workerId(WORKER_ID).secret(SECRET).coreOptions(options).gpuIds(List.of()).cpuSlots(2)
                .memoryBytes(1L << 30).scriptRoots(dir.resolve("scripts")).runRoot(dir.resolve("runs"))
                .stateDirectory(dir.resolve("state")).killGrace(Duration.ofSeconds(1))
                .reconnectBackoff(Duration.ofMillis(50), Duration.ofMillis(200))
                .logBatchLines(7).logFlushInterval(Duration.ofMillis(20))
                .nvidiaSmi(dir.resolve("no-nvidia-smi-here").toString()).build().start();
        await().atMost(Duration.ofSeconds(10)).until(worker::isConnected);
        Connection first = standIn.ready(null);
        assertThat(first).as("the stand-in accepted the worker").isNotNull();

        // As the master does: submit, claim for the connected worker's session, send ExecuteTask.
        assertThat(core.submit(TaskDefinition.builder(taskId).traceId("trace-" + taskId).build())
                .get(10, TimeUnit.SECONDS).isCreated()).isTrue();
        ClaimResult claim = core.claim(WORKER_ID, worker.getSessionId(), 1, "claim-" + taskId).get(10, TimeUnit.SECONDS);
        assertThat(claim.getStatus()).isEqualTo(ClaimStatus.OK);
        assertThat(claim.getAssignments()).hasSize(1);
        Assignment a = claim.getAssignments().get(0);
        first.channel.writeAndFlush(ExecuteTask.newBuilder().setTaskId(a.getTaskId()).setEpoch(a.getEpoch())
                .setAttempt(a.getAttempt()).setTraceId("trace-" + taskId).setScript(script).setParametersJson("{}")
                .setResources(ResourceRequest.newBuilder().setGpus(0).setCpuSlots(a.getCpuSlots())
                        .setMemoryBytes(a.getMemoryBytes()))
                .build()).syncUninterruptibly();
        return new Started(first, a);
    }

    /** One line as the stand-in reads it out of a chunk. */
    private record Line(long sequence, LogStream stream, String text) {
    }

    /** The lines of the batches in arrival order: a chunk's lines each end with LF and count on from its first. */
    private static List<Line> linesOf(List<LogBatch> batches) {
        List<Line> lines = new ArrayList<>();
        for (LogBatch b : batches) {
            for (LogChunk c : b.getChunksList()) {
                String text = c.getText().toStringUtf8();
                long sequence = c.getFirstSequence();
                for (int start = 0, end; (end = text.indexOf('\n', start)) >= 0; start = end + 1) {
                    lines.add(new Line(sequence++, c.getStream(), text.substring(start, end)));
                }
            }
        }
        return lines;
    }

    /** A master: the real codec and proofs, its own replies. */
    private static final class StandIn {
        /** Whether the first log batch is lost (as a master whose write failed loses it). */
        final boolean loseFirstBatch;
        final List<Connection> connections = new CopyOnWriteArrayList<>();

        StandIn(boolean loseFirstBatch) {
            this.loseFirstBatch = loseFirstBatch;
        }

        /** The newest connection that passed the handshake and is still open, other than {@code not}; or null. */
        Connection ready(Connection not) {
            for (int i = connections.size() - 1; i >= 0; i--) {
                Connection c = connections.get(i);
                if (c != not && c.accepted && c.channel.isActive()) {
                    return c;
                }
            }
            return null;
        }

        Connection newConnection() {
            Connection c = new Connection(this);
            connections.add(c);
            return c;
        }
    }

    /** One worker connection of the stand-in: what it received, in order. */
    private static final class Connection extends SimpleChannelInboundHandler<MessageLite> {
        private final StandIn standIn;
        private final ByteString serverNonce = HandshakeProof.newNonce();
        final List<MessageLite> received = new CopyOnWriteArrayList<>();
        volatile Channel channel;
        volatile Hello hello;
        volatile boolean accepted;
        volatile long lastAcked;
        /** The lines "written", in order: each sequence number once. */
        final List<Line> kept = new CopyOnWriteArrayList<>();
        volatile boolean lostOne;
        volatile long resendAskedAt = -1;
        volatile int resendsAsked;

        Connection(StandIn standIn) {
            this.standIn = standIn;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channel = ctx.channel();
            ctx.writeAndFlush(Challenge.newBuilder().setProtocolMajor(FrameFormat.VERSION)
                    .setProtocolMinor(FrameFormat.MINOR_VERSION).setServerNonce(serverNonce).setMasterId("stand-in").build());
            ctx.fireChannelActive();
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, MessageLite msg) {
            try {
                reply(ctx, msg);
            } finally {
                // Recorded once answered: a test that sees a message also knows its answer went out.
                received.add(msg);
            }
        }

        private void reply(ChannelHandlerContext ctx, MessageLite msg) {
            if (msg instanceof Hello h) {
                hello = h;
                boolean proven = HandshakeProof.matches(HandshakeProof.helloProof(SECRET, serverNonce,
                        h.getClientNonce(), h.getWorkerId(), h.getSessionId()), h.getProof());
                if (!proven) {
                    ctx.close();
                    return;
                }
                accepted = true;
                ctx.writeAndFlush(HelloAccepted.newBuilder().setProtocolMinor(FrameFormat.MINOR_VERSION)
                        .setMasterId("stand-in")
                        .setProof(HandshakeProof.acceptProof(SECRET, h.getClientNonce(), serverNonce, "stand-in"))
                        .setHeartbeatIntervalMs(200).setLivenessLeaseMs(5_000).setTaskLeaseMs(10_000).build());
            } else if (msg instanceof Heartbeat hb) {
                ctx.writeAndFlush(HeartbeatAck.newBuilder().setSequence(hb.getSequence()).build());
            } else if (msg instanceof LogBatch batch) {
                // As the master: the highest contiguous sequence number it has "written"; lines
                // beyond a gap ask for a resend, once per acknowledged value.
                boolean lost = standIn.loseFirstBatch && !lostOne;
                lostOne |= lost;
                boolean gap = false;
                for (Line line : lost ? List.<Line>of() : linesOf(List.of(batch))) {
                    if (line.sequence() == lastAcked + 1) {
                        lastAcked++;
                        kept.add(line);
                    } else if (line.sequence() > lastAcked + 1) {
                        gap = true;
                    }
                }
                LogAck.Builder ack = LogAck.newBuilder().setTaskId(batch.getTaskId()).setEpoch(batch.getEpoch())
                        .setAckedSequence(lastAcked);
                if ((lost || gap) && resendAskedAt != lastAcked) {
                    resendAskedAt = lastAcked;
                    resendsAsked++;
                    ack.setResend(true);
                }
                ctx.writeAndFlush(ack.build());
            }
        }

        <T extends MessageLite> List<T> of(Class<T> type) {
            return received.stream().filter(type::isInstance).map(type::cast).collect(Collectors.toList());
        }

        List<MessageLite> beforeFirst(Class<? extends MessageLite> type) {
            List<MessageLite> before = new ArrayList<>();
            for (MessageLite m : received) {
                if (type.isInstance(m)) {
                    break;
                }
                before.add(m);
            }
            return before;
        }
    }
}
