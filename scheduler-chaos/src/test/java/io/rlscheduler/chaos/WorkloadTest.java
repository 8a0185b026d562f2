package io.rlscheduler.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The workload is a function of the seed: the same tasks, parameters and submission times. */
class WorkloadTest {

    @Test
    void theSameSeedGivesTheSameTasksAndTimesAndFourTasksGoAtOnce() {
        Workload a = Workload.draw(new Random(9), 12, Duration.ofSeconds(30));
        Workload b = Workload.draw(new Random(9), 12, Duration.ofSeconds(30));

        assertThat(a.taskIds()).containsExactly("chaos-01", "chaos-02", "chaos-03", "chaos-04", "chaos-05", "chaos-06",
                "chaos-07", "chaos-08", "chaos-09", "chaos-10", "chaos-11", "chaos-12");
        assertThat(a.submitAtMillis()).isEqualTo(b.submitAtMillis()).isSorted().startsWith(0, 0, 0, 0);
        for (long t : a.submitAtMillis()) {
            assertThat(t).as("within the first 70%% of 30 s").isBetween(0L, 21_000L);
        }
        for (int i = 0; i < 12; i++) {
            assertThat(a.specs().get(i).getParameters()).isEqualTo(b.specs().get(i).getParameters());
            assertThat(a.specs().get(i).getParameters().get("episodes")).isInstanceOfSatisfying(Long.class,
                    e -> assertThat(e).isBetween(150L, 300L));
        }
    }
}
