package io.rlscheduler.examples;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.LogFiles;
import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * The limits on authenticated workers with a real worker running real python3 tasks: a task that
 * prints past the log size limit runs to its end with its log cut where the limit was, the file,
 * its followers and its record say so, and the worker's other tasks are untouched; a worker whose
 * tasks end one after another never meets its open-attempt limit.
 */
class WorkerLimitsEndToEndIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final long LIMIT = 64 * 1024;
    private static final int WIDTH = 100;

    @TempDir
    Path dir;

    private TestRedis redis;
    private RedisNamespace ns;
    private Cluster cluster;

    @BeforeEach
    void setUp(TestRedis redis, RedisNamespace ns) {
        this.redis = redis;
        this.ns = ns;
    }

    @AfterEach
    void tearDown() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private void start(UnaryOperator<SchedulerMaster.Builder> settings) {
        cluster = new Cluster(redis, ns, dir, CoreOptions.DEFAULT_CLAIM_SCAN_LIMIT, settings);
        cluster.worker("w1");
    }

    private static TaskSpec chatty(String id, int lines) {
        return TaskSpec.python("chatty.py").taskId(id).param("lines", (long) lines).param("width", (long) WIDTH).build();
    }

    /** Line i as chatty.py prints it. */
    private static String printed(int i) {
        return String.format("%06d %s", i, "x".repeat(WIDTH - 7));
    }

    @Test
    void aTaskPrintingPastTheLogLimitRunsToItsEndWithItsLogCutAndEverythingSaysSo() throws Exception {
        start(master -> master.maxLogBytesPerTask(LIMIT));
        int lines = 20_000; // about 2 MB, 30 times the limit
        TaskHandle chatty = cluster.master.submit(chatty("chatty-1", lines));
        TaskHandle quiet = cluster.master.submit(chatty("quiet-1", 50));
        List<LogRecord> followed = new CopyOnWriteArrayList<>();
        try (LogFollow follow = chatty.followLogs(followed::add)) {
            assertThat(chatty.result().get(60, TimeUnit.SECONDS).getState()).as("the process is not killed")
                    .isEqualTo(TaskState.SUCCEEDED);
            assertThat(quiet.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
            LogRecord end = follow.whenEnded().get(30, TimeUnit.SECONDS);
            assertThat(end.getFinalState()).isEqualTo(TaskState.SUCCEEDED);
            assertThat(end.isLogCut()).isTrue();
            assertThat(end.isComplete()).isFalse();
            assertThat(end.getNote()).contains("cut at " + end.getLogCutAt() + " bytes");
        }

        // The file: the lines that fit, exactly as printed, then the cut marker, then the end.
        Path file = cluster.logFile("chatty-1");
        List<String> content = Files.readAllLines(file);
        int cutLine = content.indexOf(content.stream().filter(l -> l.startsWith("##RLS_CUT ")).findFirst().orElseThrow());
        List<String> kept = content.subList(2, cutLine);
        assertThat(kept).isEqualTo(IntStream.rangeClosed(1, kept.size()).mapToObj(WorkerLimitsEndToEndIT::printed).toList());
        assertThat(kept.size()).isLessThan(lines).isGreaterThan((int) (LIMIT / (WIDTH + 1)) - 3);
        long cutAt = Long.parseLong(content.get(cutLine).replaceAll(".*at=(\\d+).*", "$1"));
        assertThat(cutAt).as("nothing written past the limit").isLessThanOrEqualTo(LIMIT)
                .isGreaterThan(LIMIT - (WIDTH + 1));
        assertThat(content.get(cutLine)).isEqualTo("##RLS_CUT at=" + cutAt + " limit=" + LIMIT);
        assertThat(content.subList(cutLine + 1, content.size())).singleElement().asString()
                .startsWith("##RLS_END state=SUCCEEDED complete=false last=" + kept.size() + " cut=" + cutAt);
        assertThat(Files.size(file)).isLessThan(LIMIT + 400);

        // The follower saw the same lines, and LogFiles reads the same.
        assertThat(followed.stream().filter(LogRecord::isLine).map(LogRecord::getText).toList()).isEqualTo(kept);
        List<LogRecord> read = LogFiles.read(file);
        assertThat(read.get(read.size() - 1).getLogCutAt()).isEqualTo(cutAt);

        // The record says the log was cut, and counts every line the task printed.
        await().atMost(Duration.ofSeconds(10)).until(() -> chatty.getRecord().isLogCut());
        TaskRecord record = chatty.getRecord();
        assertThat(record.getLogCutAt()).isEqualTo(cutAt);
        assertThat(record.getLogLines()).isEqualTo(lines);
        assertThat(cluster.master.health().getLogsCut()).isEqualTo(1);

        // The other task of the same worker: its whole log, not cut.
        List<LogRecord> quietLog = LogFiles.read(cluster.logFile("quiet-1"));
        assertThat(quietLog.stream().filter(LogRecord::isLine).map(LogRecord::getText).toList())
                .isEqualTo(IntStream.rangeClosed(1, 50).mapToObj(WorkerLimitsEndToEndIT::printed).toList());
        assertThat(quietLog.get(quietLog.size() - 1)).satisfies(e -> {
            assertThat(e.isComplete()).isTrue();
            assertThat(e.isLogCut()).isFalse();
        });
        assertThat(quiet.getRecord().isLogCut()).isFalse();
    }

    @Test
    void aWorkerRunningMoreTasksOneAfterAnotherThanItMayHaveOpenKeepsEveryLogWhole() throws Exception {
        start(master -> master.maxOpenAttemptsPerWorker(2));
        List<TaskHandle> runs = new ArrayList<>();
        for (int i = 1; i <= 5; i++) {
            TaskHandle run = cluster.master.submit(chatty("seq-" + i, 200));
            assertThat(run.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
            runs.add(run);
        }
        for (TaskHandle run : runs) {
            LogRecord end = run.followLogs(r -> { }).whenEnded().get(30, TimeUnit.SECONDS);
            assertThat(end.isComplete()).as("each attempt closed at its log's end: %s", run.getTaskId()).isTrue();
        }
        assertThat(cluster.master.health().getOpenAttemptRefusals()).isZero();
    }
}
