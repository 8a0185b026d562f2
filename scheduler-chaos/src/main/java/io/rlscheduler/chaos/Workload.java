package io.rlscheduler.chaos;

import io.rlscheduler.master.TaskSpec;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * The tasks of a chaos run and when each is submitted, drawn from the run's seeded random source.
 * Each task runs {@value #TASK_SCRIPT}: Q-learning on the grid world for 150 to 300 episodes (a few
 * seconds), checkpointing every 10, with its attempt limit raised to 100: the limits stop a poison
 * task from cycling forever, and the drill deliberately kills and freezes the same task's workers
 * again and again. Four tasks go at once when the phase starts, the rest at random times in its
 * first 70%. Immutable.
 *
 * @param specs the tasks, ids {@code chaos-01} ... in submission order
 * @param submitAtMillis when each is submitted, ms after the chaos phase starts; sorted
 */
record Workload(List<TaskSpec> specs, long[] submitAtMillis) {

    /** The task script, in the scripts directory. */
    static final String TASK_SCRIPT = "chaos_task.py";

    Workload {
        specs = List.copyOf(specs);
        submitAtMillis = submitAtMillis.clone();
    }

    /** Draws {@code tasks} tasks and their submission times over a phase of length {@code phase}. */
    static Workload draw(Random rnd, int tasks, Duration phase) {
        List<TaskSpec> specs = new ArrayList<>();
        int width = String.valueOf(tasks).length();
        for (int i = 1; i <= tasks; i++) {
            long episodes = 150 + rnd.nextInt(151);
            specs.add(TaskSpec.python(TASK_SCRIPT).taskId(String.format(Locale.ROOT, "chaos-%0" + width + "d", i))
                    .param("algo", "q-learning").param("episodes", episodes).param("episode-delay", 0.02)
                    .param("checkpoint-every", 10L).param("seed", (long) i).gpus(1).owner("chaos")
                    .maxAttempts(100).timeout(Duration.ofMinutes(10)).build());
        }
        long[] at = new long[tasks];
        long span = phase.toMillis() * 7 / 10;
        for (int i = 0; i < tasks; i++) {
            at[i] = i < Math.min(4, tasks) ? 0 : (long) (rnd.nextDouble() * span);
        }
        Arrays.sort(at);
        return new Workload(specs, at);
    }

    /** Returns the task ids in submission order. */
    List<String> taskIds() {
        return specs.stream().map(TaskSpec::getTaskId).toList();
    }

    @Override
    public long[] submitAtMillis() {
        return submitAtMillis.clone();
    }
}
