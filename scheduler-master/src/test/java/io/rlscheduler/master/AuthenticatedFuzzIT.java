package io.rlscheduler.master;

import io.lettuce.core.RedisClient;
import io.netty.channel.EventLoopGroup;
import io.netty.util.ResourceLeakDetector;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.core.internal.WorkerRegistration;
import io.rlscheduler.core.internal.WriteStatus;
import io.rlscheduler.master.WorkerFrameFuzzer.Effect;
import io.rlscheduler.master.WorkerFrameFuzzer.Frame;
import io.rlscheduler.master.WorkerFrameFuzzer.Kind;
import io.rlscheduler.protocol.ExecuteTask;
import io.rlscheduler.protocol.LeakCheck;
import io.rlscheduler.protocol.NettyTransport;
import io.rlscheduler.protocol.ProtocolOptions;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.SchedulerWorker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The codec fuzz of the protocol module, taken past the handshake: a peer that holds the shared
 * secret, is registered in Redis as a real worker is, and holds one task authenticates over a real
 * loopback socket to a real master (real Redis, real log directory) and sends it mutated frames
 * ({@link WorkerFrameFuzzer}), in pipelined batches each followed by a marker heartbeat, connecting
 * and authenticating again whenever the master closes the connection. Then:
 * <ul>
 *   <li>every answer was typed ({@link FuzzPeer}): an error with a known code, a log or heartbeat
 *       acknowledgement, an assignment or a cancel of its task, or a close;</li>
 *   <li>nothing was logged at ERROR (nothing escaped a handler, no write failed), and Netty
 *       warned of nothing (no exception reached the end of a pipeline);</li>
 *   <li>nothing was created outside the log directory: not beside it, not in the test's directory,
 *       not in the working directory; and in it only files named {@code <valid id>.log};</li>
 *   <li>the process's open file descriptors (less the log files the master keeps open) and
 *       threads are where they were after the warm-up, within a few: a thousand connections and
 *       100,000 frames went by, so a leak of one per connection or per frame would show;</li>
 *   <li>Netty's leak detector, at PARANOID (every buffer tracked), reported no leaked buffer;</li>
 *   <li>the master is alive: a bystander worker connected all along was answered all along and
 *       still is, and a real {@link SchedulerWorker} that joins afterwards runs a python3 task to
 *       SUCCEEDED.</li>
 * </ul>
 *
 * <p>The leak check is the protocol module's {@link LeakCheck}, around the whole class, so the
 * shutdown of the master and the workers is checked too. It sets the detector's level at run time
 * ({@link ResourceLeakDetector#setLevel}), which applies whether or not an earlier test of this JVM
 * loaded Netty (the level is read at each allocation, unlike {@code -Dio.netty.leakDetection.level},
 * read once when Netty loads), and takes the leak reports from the detector's logger: Netty reports
 * leaks only there (its listener hook belongs to the ByteBuf detector instance, which it does not
 * expose).
 *
 * <p>Replay a run with {@code -Dfuzz.seed=<seed it printed>}; {@code -Dfuzz.frames=N} sends fewer
 * frames for a quick run (the 100,000 by default).
 */
@ExtendWith(LeakCheck.class)
class AuthenticatedFuzzIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final long SEED = Long.getLong("fuzz.seed", 0xA17E_5EEDL);
    private static final int FRAMES = Integer.getInteger("fuzz.frames", 100_000);
    private static final String REPLAY = " (replay with -Dfuzz.seed=" + SEED + ")";
    private static final byte[] SECRET = "authenticated-fuzz-shared-secret".getBytes(StandardCharsets.UTF_8);
    private static final String FUZZ_ID = "fuzz-peer";
    private static final String BYSTANDER_ID = "bystander";
    private static final String HELD_TASK = "fuzz-held";
    /** Frames per batch: 1 to twice this, the marker after them. */
    private static final int MEAN_BATCH = 40;
    /** One batch in this many ends with a frame that may end the connection. */
    private static final int RISKY_ONE_IN = 2;
    /** Frames sent before the baseline of descriptors and threads: every event loop and log thread has started. */
    private static final int WARM_UP = Math.min(5_000, FRAMES / 10);
    private static final int FD_TOLERANCE = 32;
    private static final int THREAD_TOLERANCE = 8;
    /** Log operations queued beyond which the peer waits for the master's disk to catch up. */
    private static final int MAX_LOG_BACKLOG = 2_000;

    @TempDir
    Path root;

    private TestRedis redis;
    private Path logs;
    private Path scripts;
    private CoreOptions options;
    private SchedulerMaster master;
    private LeaseCore core;
    private EventLoopGroup group;
    private LogTally tally;
    /** A worker connected all along, heartbeating as a worker does: the master must keep serving it. */
    private FuzzPeer bystander;
    private final List<AutoCloseable> closing = new ArrayList<>();

    @BeforeEach
    void start(TestRedis redis, RedisClient client, RedisNamespace ns) throws IOException {
        this.redis = redis;
        tally = LogTally.of("io.rlscheduler", "io.netty");
        logs = root.resolve("master").resolve("logs");
        scripts = Files.createDirectories(root.resolve("scripts"));
        Files.writeString(scripts.resolve("noop.py"), "pass\n");
        options = CoreOptions.builder().namespace(ns.name()).heartbeatInterval(Duration.ofMillis(500))
                .livenessLease(Duration.ofMinutes(10)).taskLease(Duration.ofMinutes(10)).build();
        master = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                .coreOptions(options).logDirectory(logs).build().start();
        core = LeaseCore.create(client, options);
        group = NettyTransport.nio().newGroup(1, "fuzz-client");
    }

    @AfterEach
    void stop() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        master.close();
        core.close();
        tally.close();
    }

    @Test
    void mutatedFramesAfterAValidHandshakeGetOnlyTypedAnswersAndLeaveTheMasterServing() throws Exception {
        long started = System.nanoTime();
        FuzzPeer peer = registeredPeer(FUZZ_ID, "fuzz");
        ExecuteTask held = holdTask(peer);
        bystander = registeredPeer(BYSTANDER_ID, "bystander");
        SortedSet<String> filesBefore = filesOutsideTheLogDirectory();

        long fuzzStarted = System.nanoTime();
        long cpuStarted = processCpuNanos();
        Fuzzing fuzzing = new Fuzzing(peer, held.getEpoch());
        fuzzing.send(WARM_UP);
        Resources baseline = resources(peer);
        int connectionsAtBaseline = peer.connections();
        fuzzing.send(FRAMES - WARM_UP);
        await().atMost(Duration.ofSeconds(60)).until(() -> master.health().getLogWriteBacklog() == 0);
        Resources after = resources(peer);
        long fuzzMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - fuzzStarted);
        long cpuMillis = TimeUnit.NANOSECONDS.toMillis(processCpuNanos() - cpuStarted);

        System.out.printf("authenticated fuzz seed=%d frames=%d batches=%d connections=%d bytes=%d,"
                        + " sent and answered in %d ms (%d ms of CPU, master and peer)%n  frames by kind: %s%n"
                        + "  answers: %s%n  log events: %s%n  resources: baseline %s, after %s%n",
                SEED, fuzzing.sent, fuzzing.batches, peer.connections(), fuzzing.bytes, fuzzMillis, cpuMillis,
                fuzzing.byKind, peer.answers(), tally.counts(), baseline, after);

        assertThat(fuzzing.sent).isEqualTo(FRAMES);
        assertThat(fuzzing.byKind.keySet()).as("every kind of frame was sent").containsExactlyInAnyOrder(Kind.values());
        assertOnlyTypedAnswersAndNoErrors(peer);
        assertThat(filesOutsideTheLogDirectory()).as("files outside the log directory" + REPLAY)
                .containsExactlyElementsOf(filesBefore);
        long logBytes = assertOnlyUnforgedLogFilesIn(logs);
        assertTheHeldTaskIsAsItWas(held);
        assertThat(after.fdsBesideLogFiles()).as("open descriptors less open log files, after " + baseline)
                .isLessThanOrEqualTo(baseline.fdsBesideLogFiles() + FD_TOLERANCE);
        assertThat(after.threads()).as("threads, after " + baseline)
                .isLessThanOrEqualTo(baseline.threads() + THREAD_TOLERANCE);
        if (FRAMES >= 100_000) {
            assertThat(peer.connections() - connectionsAtBaseline).as("connections after the baseline: enough that"
                    + " a leak of one descriptor or thread each exceeds the tolerance").isGreaterThan(4 * FD_TOLERANCE);
        }

        assertThat(bystander.connections()).as("the bystander's connection survived the fuzz").isOne();
        assertThat(bystander.marker(WorkerFrameFuzzer.MARKER_BASE)).as("the bystander is answered").isTrue();
        assertThat(bystander.violations()).isEmpty();
        peer.close();
        bystander.close();
        assertAnHonestWorkerRunsATask();
        System.out.printf("authenticated fuzz done in %d ms; %d bytes of logs%n",
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started), logBytes);
    }

    /** The batches of one run: keeping frames, sometimes a risky one, then a marker or a half-close. */
    private final class Fuzzing {
        final Random random = new Random(SEED);
        final Map<Kind, Integer> byKind = new EnumMap<>(Kind.class);
        final FuzzPeer peer;
        final WorkerFrameFuzzer fuzzer;
        int sent;
        int batches;
        long bytes;

        /** Fuzzes {@code peer}, which holds {@link #HELD_TASK} at {@code heldEpoch}. */
        Fuzzing(FuzzPeer peer, long heldEpoch) {
            this.peer = peer;
            fuzzer = new WorkerFrameFuzzer(random, ProtocolOptions.DEFAULT_MAX_FRAME_LENGTH, FUZZ_ID, "session-" + FUZZ_ID,
                    HELD_TASK, heldEpoch, List.of(root, logs.getParent(), cwd()));
        }

        void send(int frames) {
            int end = sent + frames;
            while (sent < end) {
                if (!peer.isOpen()) {
                    peer.connect();
                }
                int size = Math.min(1 + random.nextInt(2 * MEAN_BATCH), end - sent);
                List<Frame> batch = new ArrayList<>(size);
                for (int i = 0; i < size; i++) {
                    batch.add(i == size - 1 && random.nextInt(RISKY_ONE_IN) == 0 ? fuzzer.risky() : fuzzer.keeping());
                }
                batch.forEach(f -> byKind.merge(f.kind(), 1, Integer::sum));
                peer.send(batch.stream().map(Frame::bytes).toList(), random);
                bytes += batch.stream().mapToLong(f -> f.bytes().length).sum();
                sent += size;
                batches++;
                if (batch.get(size - 1).kind().effect == Effect.BREAKS_FRAMING) {
                    peer.halfCloseAndAwaitClose();
                } else {
                    peer.marker(WorkerFrameFuzzer.MARKER_BASE + batches);
                }
                if (batches % 32 == 0) {
                    assertThat(bystander.marker(WorkerFrameFuzzer.MARKER_BASE + batches))
                            .as("the bystander is answered during the fuzz, after batch " + batches).isTrue();
                }
                if (batches % 16 == 0 && master.health().getLogWriteBacklog() > MAX_LOG_BACKLOG) {
                    await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(5))
                            .until(() -> master.health().getLogWriteBacklog() < MAX_LOG_BACKLOG / 10);
                }
            }
        }
    }

    private void assertOnlyTypedAnswersAndNoErrors(FuzzPeer peer) {
        assertThat(peer.violations()).as("answers that are not typed" + REPLAY).isEmpty();
        assertThat(peer.answers()).as("the fuzz got past the handshake and was answered")
                .containsKeys("HEARTBEAT_ACK", "LOG_ACK", "close: by the master");
        assertThat(peer.answers().keySet()).as("refused frames got typed errors")
                .anySatisfy(k -> assertThat(k).startsWith("ERROR "));
        assertThat(tally.counts().keySet()).as("ERROR events, and Netty's warnings" + REPLAY + ": " + tally.errors())
                .noneMatch(k -> k.startsWith("ERROR ") || k.startsWith("WARN io.netty"));
        tally.close(); // the rest of the test logs as usual
    }

    /** The held task's log was written to, and its record in Redis is as the assignment left it. */
    private void assertTheHeldTaskIsAsItWas(ExecuteTask held) throws IOException {
        try (Stream<String> lines = Files.lines(logs.resolve(HELD_TASK + ".log"), StandardCharsets.ISO_8859_1)) {
            assertThat(lines.count()).as("lines of the held task's log: the fuzz reached its writes").isGreaterThan(100);
        }
        assertThat(master.getTask(HELD_TASK).orElseThrow()).as("the held task's record").satisfies(record -> {
            assertThat(record.getState()).isEqualTo(TaskState.RUNNING);
            assertThat(record.getEpoch()).isEqualTo(held.getEpoch());
            assertThat(record.getWorkerId()).isEqualTo(FUZZ_ID);
        });
    }

    /** Registers a worker in Redis as a real worker does, and connects it as a peer. */
    private FuzzPeer registeredPeer(String workerId, String role) throws Exception {
        core.register(new WorkerRegistration(workerId, "session-" + workerId, Map.of("role", role), 1, 0, List.of()))
                .get(10, TimeUnit.SECONDS);
        FuzzPeer peer = new FuzzPeer(group, master.getRpcAddress(), SECRET, workerId, "session-" + workerId);
        closing.add(peer);
        peer.connect();
        return peer;
    }

    /** Has the master assign a task to the peer, acknowledged in Redis as a worker that starts it does. */
    private ExecuteTask holdTask(FuzzPeer peer) throws Exception {
        master.submit(TaskSpec.python("noop.py").taskId(HELD_TASK).selector("role", "fuzz").build());
        ExecuteTask task = peer.awaitAssignment();
        assertThat(task.getTaskId()).isEqualTo(HELD_TASK);
        assertThat(core.acknowledge(new TaskLease(HELD_TASK, task.getEpoch()), FUZZ_ID, "session-" + FUZZ_ID)
                .get(10, TimeUnit.SECONDS).getStatus()).isEqualTo(WriteStatus.APPLIED);
        return task;
    }

    private void assertAnHonestWorkerRunsATask() throws Exception {
        Path honest = Files.createDirectories(root.resolve("honest"));
        SchedulerWorker worker = SchedulerWorker.builder().masters("127.0.0.1:" + master.getRpcAddress().getPort())
                .redis(redis.getUri()).workerId("honest").secret(SECRET).coreOptions(options)
                .labels(Map.of("role", "honest")).gpuIds().cpuSlots(1).scriptRoots(scripts)
                .runRoot(honest.resolve("runs")).stateDirectory(honest.resolve("state"))
                .nvidiaSmi(honest.resolve("no-nvidia-smi-here").toString()).build().start();
        closing.add(worker);
        TaskHandle run = master.submit(TaskSpec.python("noop.py").taskId("after-the-fuzz").selector("role", "honest")
                .build());
        assertThat(run.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
    }

    /** Every path under the test's directory but the log directory, and the working directory's entries. */
    private SortedSet<String> filesOutsideTheLogDirectory() throws IOException {
        SortedSet<String> files = new TreeSet<>();
        try (Stream<Path> walk = Files.walk(root)) {
            walk.filter(p -> !p.startsWith(logs)).forEach(p -> files.add(root.relativize(p).toString()));
        }
        try (Stream<Path> top = Files.list(cwd())) {
            top.forEach(p -> files.add("(working directory)/" + p.getFileName()));
        }
        return files;
    }

    /**
     * The log directory holds only files named {@code <valid id>.log}, each a header line, then
     * attempt markers and text: no attempt ended (ends come from Redis, never from a peer), and
     * every text line that begins like a marker is stored behind the escape prefix.
     *
     * @return the bytes in the log directory
     */
    private static long assertOnlyUnforgedLogFilesIn(Path logs) throws IOException {
        long bytes = 0;
        try (Stream<Path> walk = Files.walk(logs)) {
            for (Path p : walk.filter(p -> !p.equals(logs)).toList()) {
                assertThat(p.getParent()).isEqualTo(logs);
                assertThat(Files.isRegularFile(p)).as(p + " is a file").isTrue();
                String name = p.getFileName().toString();
                assertThat(name).endsWith(".log");
                assertThat(TaskIds.isValid(name.substring(0, name.length() - ".log".length()))).as(name).isTrue();
                byte[] content = Files.readAllBytes(p);
                bytes += content.length;
                // Markers are ASCII: read as Latin-1, any byte is a character and the prefixes still match.
                List<String> lines = List.of(new String(content, StandardCharsets.ISO_8859_1).split("\n", -1));
                assertThat(lines.get(0)).as(name + ": header").startsWith("TRACE_ID:");
                assertThat(lines.subList(1, lines.size())).as(name + ": markers").allSatisfy(line -> {
                    if (line.startsWith("##RLS_")) {
                        assertThat(line).matches("##RLS_(ATTEMPT|TEXT) .*");
                    }
                });
            }
        }
        return bytes;
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static Path cwd() {
        return Path.of("").toAbsolutePath();
    }

    /** Descriptors and threads of this process, the master's included; the peer connected when counted. */
    private record Resources(long fds, int openLogFiles, int threads) {
        long fdsBesideLogFiles() {
            return fds - openLogFiles;
        }
    }

    private Resources resources(FuzzPeer peer) {
        if (!peer.isOpen()) {
            peer.connect();
        }
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return new Resources(fds.count(), master.health().getOpenLogFiles(),
                    ManagementFactory.getThreadMXBean().getThreadCount());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
