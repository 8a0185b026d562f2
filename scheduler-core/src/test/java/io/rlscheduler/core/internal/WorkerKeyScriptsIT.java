package io.rlscheduler.core.internal;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.TaskEvent;
import io.rlscheduler.core.TaskLease;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerRevokedException;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.record;
import static io.rlscheduler.core.internal.CoreFixture.running;
import static io.rlscheduler.core.internal.CoreFixture.worker;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/** worker_key.lua, revoke_worker.lua, hello.lua and register.lua's revocation check, on a real Redis. */
class WorkerKeyScriptsIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private LeaseCore core;

    @BeforeEach
    void open(RedisClient client, RedisNamespace ns) {
        core = CoreFixture.core(client, ns);
    }

    @AfterEach
    void close() {
        core.close();
    }

    @Test
    void aKeyIsIssuedOnceThenRotatedAndListedWithItsTimes() {
        WorkerKeyResult issued = join(core.workerKeys().issue("w1", "k-1", "PUB1", "ACC1"));
        assertThat(issued.getStatus()).isEqualTo(WorkerKeyResult.Status.OK);
        WorkerKeyRecord first = issued.getKey().orElseThrow();
        assertThat(first.getKeyId()).isEqualTo("k-1");
        assertThat(first.getPublicKey()).isEqualTo("PUB1");
        assertThat(first.getAcceptKey()).isEqualTo("ACC1");
        assertThat(first.getCreatedAtMillis()).isPositive();
        assertThat(first.getRotatedAtMillis()).isZero();
        assertThat(first.hasLiveKey()).isTrue();

        WorkerKeyResult again = join(core.workerKeys().issue("w1", "k-2", "PUB2", "ACC2"));
        assertThat(again.getStatus()).isEqualTo(WorkerKeyResult.Status.EXISTS);
        assertThat(again.getKey().orElseThrow().getKeyId()).as("unchanged").isEqualTo("k-1");

        WorkerKeyResult rotated = join(core.workerKeys().rotate("w1", "k-2", "PUB2", "ACC2"));
        assertThat(rotated.getStatus()).isEqualTo(WorkerKeyResult.Status.OK);
        assertThat(rotated.getKey().orElseThrow()).satisfies(k -> {
            assertThat(k.getKeyId()).isEqualTo("k-2");
            assertThat(k.getPublicKey()).isEqualTo("PUB2");
            assertThat(k.getCreatedAtMillis()).isEqualTo(first.getCreatedAtMillis());
            assertThat(k.getRotatedAtMillis()).isGreaterThanOrEqualTo(first.getCreatedAtMillis());
        });
        assertThat(join(core.workerKeys().rotate("w2", "k-3", "P", "A")).getStatus()).isEqualTo(WorkerKeyResult.Status.NO_KEY);
        join(core.workerKeys().issue("w0", "k-0", "P0", "A0"));
        assertThat(join(core.workerKeys().list())).extracting(WorkerKeyRecord::getWorkerId, WorkerKeyRecord::getKeyId)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("w0", "k-0"), org.assertj.core.groups.Tuple.tuple("w1", "k-2"));
        assertThatThrownBy(() -> core.workerKeys().issue("bad id", "k", "P", "A")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void theHelloRecordHasTheRegisteredSessionItsLivenessAndTheKey() {
        HelloRecord unknown = join(core.workerKeys().helloRecord("w1"));
        assertThat(unknown.isRegistered()).isFalse();
        assertThat(unknown.getKey()).isEmpty();

        join(core.register(worker("w1", "s1")));
        join(core.workerKeys().issue("w1", "k-1", "PUB", "ACC"));
        HelloRecord live = join(core.workerKeys().helloRecord("w1"));
        assertThat(live.getSession()).isEqualTo("s1");
        assertThat(live.isLive()).isTrue();
        assertThat(live.getKey().orElseThrow().getPublicKey()).isEqualTo("PUB");
        // The short leases: liveness 0.8 s without a heartbeat.
        await().atMost(Duration.ofSeconds(5)).until(() -> !join(core.workerKeys().helloRecord("w1")).isLive());
        assertThat(join(core.workerKeys().helloRecord("w1")).getSession()).as("still registered, not live").isEqualTo("s1");
    }

    @Test
    void revocationFencesTheSessionTakesItsTaskBackOnceAndRefusesRegistrations() throws Exception {
        List<TaskEvent> events = new CopyOnWriteArrayList<>();
        try (EventSubscription sub = core.subscribe("$", events::add)) {
            TaskLease lease = running(core, "w1", "s1");
            join(core.workerKeys().issue("w1", "k-1", "PUB", "ACC"));

            WorkerRevocation revoked = join(core.workerKeys().revoke("w1"));
            assertThat(revoked.getKey().isRevoked()).isTrue();
            assertThat(revoked.getKey().getKeyId()).isEqualTo("k-1");
            assertThat(revoked.getFencedSession()).isEqualTo("s1");
            assertThat(revoked.getTakenBack().getRequeued()).containsExactly(lease.getTaskId());
            TaskRecord task = record(core, lease.getTaskId());
            assertThat(task.getState()).isEqualTo(TaskState.QUEUED);
            assertThat(task.getLeaseLosses()).as("a revocation is no lease loss").isZero();

            // The old session's writes fail the fencing; it is no longer registered.
            assertThat(join(core.acknowledge(lease, "w1", "s1")).isAccepted()).isFalse();
            assertThat(join(core.finish(lease, "w1", "s1", TaskState.SUCCEEDED, 0, null, null)).isAccepted()).isFalse();
            assertThat(join(core.heartbeat("w1", "s1", List.of(lease))).getStatus()).isEqualTo(HeartbeatStatus.UNKNOWN_WORKER);
            assertThat(CoreFixture.allInState(core, TaskState.RUNNING)).isEmpty();
            assertThat(join(core.listWorkers())).isEmpty();
            assertThat(join(core.workerKeys().helloRecord("w1")).isRegistered()).isFalse();

            // Neither the old session nor a new one can register.
            for (String session : List.of("s1", "s2")) {
                assertThatThrownBy(() -> core.register(worker("w1", session)).join()).isInstanceOf(CompletionException.class)
                        .cause().isInstanceOfSatisfying(WorkerRevokedException.class, e -> {
                            assertThat(e.getWorkerId()).isEqualTo("w1");
                            assertThat(e.getRevokedAtMillis()).isEqualTo(revoked.getKey().getRevokedAtMillis());
                            assertThat(e.isRetryable()).isFalse();
                        });
            }
            assertThat(join(core.listWorkers())).isEmpty();

            // Repeated: nothing more is taken back, the mark keeps its time.
            WorkerRevocation again = join(core.workerKeys().revoke("w1"));
            assertThat(again.getTakenBack().getRequeued()).isEmpty();
            assertThat(again.getKey().getRevokedAtMillis()).isEqualTo(revoked.getKey().getRevokedAtMillis());
            assertThat(record(core, lease.getTaskId()).getHistory()).filteredOn(h -> h.getTo() == TaskState.QUEUED)
                    .as("submitted, then taken back once").hasSize(2);
            assertThat(join(core.workerKeys().rotate("w1", "k-2", "P", "A")).getStatus()).isEqualTo(WorkerKeyResult.Status.REVOKED);

            await().atMost(Duration.ofSeconds(5)).until(() -> events.stream().anyMatch(e -> e.getKind() == TaskEvent.Kind.WORKER
                    && "revoked".equals(e.getFields().get("what")) && "w1".equals(e.getFields().get("worker"))));
            assertThat(events).anySatisfy(e -> {
                assertThat(e.getTaskId()).isEqualTo(lease.getTaskId());
                assertThat(e.getTo()).isEqualTo(TaskState.QUEUED);
                assertThat(e.getVia()).isEqualTo(TaskEvent.Via.REVOKE);
            });
        }

        // A new key for the id (a new machine) lifts the revocation.
        WorkerKeyResult reissued = join(core.workerKeys().issue("w1", "k-9", "PUB9", "ACC9"));
        assertThat(reissued.getStatus()).isEqualTo(WorkerKeyResult.Status.OK);
        assertThat(reissued.getKey().orElseThrow().isRevoked()).isFalse();
        join(core.register(worker("w1", "s3")));
        assertThat(join(core.workerKeys().helloRecord("w1")).getSession()).isEqualTo("s3");
    }

    @Test
    void aWorkerIdWithoutAKeyCanBeRevokedToo() {
        join(core.register(worker("w1", "s1")));
        WorkerRevocation revoked = join(core.workerKeys().revoke("w1"));
        assertThat(revoked.getKey().getKeyId()).isEmpty();
        assertThat(revoked.getKey().isRevoked()).isTrue();
        assertThat(revoked.getKey().hasLiveKey()).isFalse();
        assertThat(join(core.workerKeys().helloRecord("w1")).getKey().orElseThrow().isRevoked()).isTrue();
        assertThatThrownBy(() -> core.register(worker("w1", "s2")).join()).hasCauseInstanceOf(WorkerRevokedException.class);
        assertThat(join(core.workerKeys().rotate("w1", "k-1", "P", "A")).getStatus()).isEqualTo(WorkerKeyResult.Status.REVOKED);
        assertThat(join(core.workerKeys().issue("w1", "k-1", "P", "A")).getStatus()).isEqualTo(WorkerKeyResult.Status.OK);
    }
}
