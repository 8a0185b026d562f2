package io.rlscheduler.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The fault plan is a function of the seed, spaces its actions 2 to 5 s apart and holds every kind. */
class FaultPlanTest {

    private static final Duration PHASE = Duration.ofSeconds(120);

    @Test
    void theSameSeedGivesTheSamePlan() {
        FaultPlan a = FaultPlan.draw(new Random(42), PHASE, true);
        FaultPlan b = FaultPlan.draw(new Random(42), PHASE, true);

        assertThat(a.kinds()).isEqualTo(b.kinds());
        for (int i = 0; i < a.size(); i++) {
            assertThat(a.atMillis(i)).isEqualTo(b.atMillis(i));
        }
    }

    @Test
    void actionsComeEveryTwoToFiveSecondsWithinThePhase() {
        FaultPlan plan = FaultPlan.draw(new Random(7), PHASE, true);

        assertThat(plan.size()).isBetween(23, 59);
        long previous = 0;
        for (int i = 0; i < plan.size(); i++) {
            assertThat(plan.atMillis(i) - previous).isBetween(2000L, 5000L);
            previous = plan.atMillis(i);
        }
        assertThat(previous).isLessThan(PHASE.toMillis() - 1000);
    }

    @Test
    void everyKindComesInTheFirstSeventyPercentAndRedisExactlyOnce() {
        for (long seed = 1; seed <= 200; seed++) {
            FaultPlan plan = FaultPlan.draw(new Random(seed), Duration.ofSeconds(30), true);
            int early = Math.max(4, (int) (plan.size() * 0.7));
            List<FaultPlan.Fault> firstPart = plan.kinds().subList(0, Math.min(early, plan.size()));

            assertThat(firstPart).as("seed %d", seed).contains(FaultPlan.Fault.values());
            assertThat(Collections.frequency(plan.kinds(), FaultPlan.Fault.RESTART_REDIS)).as("seed %d", seed).isOne();
        }
    }

    @Test
    void redisIsNeverRestartedWhenItMayNotBe() {
        FaultPlan plan = FaultPlan.draw(new Random(3), PHASE, false);

        assertThat(plan.kinds()).doesNotContain(FaultPlan.Fault.RESTART_REDIS)
                .contains(FaultPlan.Fault.KILL_WORKER, FaultPlan.Fault.FREEZE_WORKER, FaultPlan.Fault.KILL_LEADER);
    }
}
