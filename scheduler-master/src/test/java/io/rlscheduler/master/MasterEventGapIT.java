package io.rlscheduler.master;

import static org.assertj.core.api.Assertions.assertThat;

import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * A master whose event thread a task listener held while the stream was trimmed past it: the
 * result of a task that ended meanwhile still completes, the listeners are told of the gap, and
 * health counts it. A real master on real Redis; no workers (tasks end by cancellation).
 */
class MasterEventGapIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    @TempDir
    Path dir;

    @Test
    void aResultWhoseEndEventWasTrimmedUnreadStillCompletesAndHealthCountsTheGap(TestRedis redis, RedisNamespace ns)
            throws Exception {
        try (SchedulerMaster master = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0)
                .secret("event-gap-test-shared-secret".getBytes(StandardCharsets.UTF_8))
                .coreOptions(CoreOptions.builder().namespace(ns.name()).eventStreamMaxLength(100).build())
                .logDirectory(dir.resolve("logs")).masterId("m1").build().start()) {
            TaskHandle waited = master.submit(TaskSpec.python("train.py").taskId("waited").build());
            CompletableFuture<TaskResult> result = waited.result();

            CountDownLatch held = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            List<TaskEvent> seen = new CopyOnWriteArrayList<>();
            master.addTaskListener(event -> {
                seen.add(event);
                if ("hold".equals(event.getTaskId())) {
                    held.countDown();
                    try {
                        release.await(60, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            master.submit(TaskSpec.python("train.py").taskId("hold").build());
            assertThat(held.await(30, TimeUnit.SECONDS)).isTrue();
            assertThat(waited.cancel()).isTrue();
            for (int i = 0; i < 400; i++) {
                master.submit(TaskSpec.python("train.py").taskId("filler-" + i).build()); // an entry each
            }
            assertThat(result).as("its end event is behind the held listener").isNotDone();
            assertThat(master.health().getEventGaps()).isZero();
            release.countDown();

            assertThat(result.get(30, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.CANCELLED);
            assertThat(master.health().getEventGaps()).isEqualTo(1);
            assertThat(seen).filteredOn(e -> TaskEvent.GAP.equals(e.getType())).singleElement()
                    .satisfies(gap -> assertThat(gap.getFields()).containsKeys("after", "next"));
            assertThat(seen).as("the end's own event was trimmed unread")
                    .noneMatch(e -> "waited".equals(e.getTaskId()) && e.getTo() == TaskState.CANCELLED);
        }
    }
}
