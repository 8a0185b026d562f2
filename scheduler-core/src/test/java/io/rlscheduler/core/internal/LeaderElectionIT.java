package io.rlscheduler.core.internal;

import io.lettuce.core.RedisClient;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import static io.rlscheduler.core.internal.CoreFixture.join;
import static io.rlscheduler.core.internal.CoreFixture.requestId;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/** The masters' leadership lease and its fencing epoch, against a real Redis. */
class LeaderElectionIT {

    @RegisterExtension
    static RedisExtension redis = new RedisExtension();

    private static final Duration LEASE = Duration.ofMillis(600);

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
    void firstMasterLeadsOthersSeeItAndRenewalKeepsTheEpoch() {
        LeaderStatus a = join(core.acquireLeadership("m-a", "10.0.0.1:9000", LEASE));
        assertThat(a.isSelf()).isTrue();
        assertThat(a.getEpoch()).isEqualTo(1);
        LeaderStatus b = join(core.acquireLeadership("m-b", "10.0.0.2:9000", LEASE));
        assertThat(b.isSelf()).isFalse();
        assertThat(b.getLeaderId()).isEqualTo("m-a");
        assertThat(b.getAddress()).isEqualTo("10.0.0.1:9000");
        LeaderStatus renewed = join(core.acquireLeadership("m-a", "10.0.0.1:9000", LEASE));
        assertThat(renewed.isSelf()).isTrue();
        assertThat(renewed.getEpoch()).isEqualTo(1);
        assertThat(renewed.getDeadlineMillis()).isGreaterThanOrEqualTo(a.getDeadlineMillis());
    }

    @Test
    void expiredLeaderIsReplacedWithANewEpochAndCanNoLongerClaimOrReap() {
        join(core.register(CoreFixture.worker("w1", "s1", 0)));
        join(core.submit(CoreFixture.task("t1", 1)));
        LeaderStatus old = join(core.acquireLeadership("m-a", "a:1", LEASE));
        await().atMost(Duration.ofSeconds(5)).until(() -> join(core.acquireLeadership("m-b", "b:1", LEASE)).isSelf());
        LeaderStatus current = join(core.acquireLeadership("m-b", "b:1", LEASE));
        assertThat(current.getEpoch()).isEqualTo(old.getEpoch() + 1);

        join(core.heartbeat("w1", "s1", List.of()));
        ClaimResult stale = join(core.claim("w1", "s1", 1, requestId(), old));
        assertThat(stale.getStatus()).isEqualTo(ClaimStatus.NOT_LEADER);
        assertThat(stale.getAssignments()).isEmpty();
        assertThat(join(core.getTask("t1")).orElseThrow().getState()).isEqualTo(TaskState.QUEUED);
        assertThat(join(core.reap(old)).getRequeued()).isEmpty();

        ClaimResult fresh = join(core.claim("w1", "s1", 1, requestId(), current));
        assertThat(fresh.getStatus()).isEqualTo(ClaimStatus.OK);
        assertThat(fresh.getAssignments()).extracting(Assignment::getTaskId).containsExactly("t1");
    }

    @Test
    void pausedOldLeaderWakingUpDoesNotGetLeadershipBack() {
        LeaderStatus old = join(core.acquireLeadership("m-a", "a:1", LEASE));
        await().atMost(Duration.ofSeconds(5)).until(() -> join(core.acquireLeadership("m-b", "b:1", LEASE)).isSelf());
        LeaderStatus woke = join(core.acquireLeadership("m-a", "a:1", LEASE));
        assertThat(woke.isSelf()).isFalse();
        assertThat(woke.getLeaderId()).isEqualTo("m-b");
        assertThat(woke.getEpoch()).isGreaterThan(old.getEpoch());
    }

    @Test
    void resigningHandsLeadershipOverAtOnce() {
        join(core.acquireLeadership("m-a", "a:1", Duration.ofMinutes(5)));
        assertThat(join(core.acquireLeadership("m-b", "b:1", Duration.ofMinutes(5))).isSelf()).isFalse();
        join(core.resignLeadership("m-b"));
        assertThat(join(core.acquireLeadership("m-b", "b:1", Duration.ofMinutes(5))).isSelf())
                .as("a standby's resignation changes nothing").isFalse();
        join(core.resignLeadership("m-a"));
        LeaderStatus b = join(core.acquireLeadership("m-b", "b:1", Duration.ofMinutes(5)));
        assertThat(b.isSelf()).isTrue();
        assertThat(b.getEpoch()).isEqualTo(2);
    }

    @Test
    void observingReportsTheLeaderWithoutEverTakingTheLease() {
        LeaderStatus none = join(core.observeLeadership());
        assertThat(none.isSelf()).isFalse();
        assertThat(none.getLeaderId()).as("nobody leads, and observing does not change that").isEmpty();
        assertThat(join(core.observeLeadership()).getLeaderId()).isEmpty();

        LeaderStatus a = join(core.acquireLeadership("m-a", "a:1", LEASE));
        assertThat(a.getEpoch()).as("the observer never held the lease").isEqualTo(1);
        LeaderStatus seen = join(core.observeLeadership());
        assertThat(seen.isSelf()).isFalse();
        assertThat(seen.getLeaderId()).isEqualTo("m-a");
        assertThat(seen.getAddress()).isEqualTo("a:1");
        assertThat(seen.getEpoch()).isEqualTo(1);
        assertThat(seen.getDeadlineMillis()).isEqualTo(a.getDeadlineMillis());

        await().atMost(Duration.ofSeconds(5)).until(() -> join(core.observeLeadership()).getLeaderId().isEmpty());
        assertThat(join(core.acquireLeadership("m-b", "b:1", LEASE)).getEpoch())
                .as("an expired lease is reported as none, and observing does not bump the epoch").isEqualTo(2);
    }
}
