package io.rlscheduler.chaos;

import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskSpec;
import java.util.List;

/**
 * Submits a workload's tasks on their schedule through the run's standby-only master, retrying
 * each while Redis or the masters are down (submission is idempotent by task id) until the
 * deadline. A daemon thread of its own, so that the faults go on meanwhile.
 */
final class TaskSubmitter extends Thread {

    /** Pause between tries of one submission. */
    private static final long RETRY_MILLIS = 250;

    private final SchedulerMaster api;
    private final List<TaskSpec> specs;
    private final long[] at;
    private final long deadline;
    private final RunLog log;

    /** {@code deadline}: a {@link System#nanoTime()} after which a failed submission is given up. */
    TaskSubmitter(SchedulerMaster api, Workload workload, long deadline, RunLog log) {
        super("chaos-submitter");
        setDaemon(true);
        this.api = api;
        this.specs = workload.specs();
        this.at = workload.submitAtMillis();
        this.deadline = deadline;
        this.log = log;
    }

    @Override
    public void run() {
        long start = System.nanoTime();
        try {
            for (int i = 0; i < specs.size(); i++) {
                long wait = at[i] - (System.nanoTime() - start) / 1_000_000;
                if (wait > 0) {
                    Thread.sleep(wait);
                }
                if (!submit(specs.get(i))) {
                    return;
                }
            }
            log.say("all %d tasks submitted", specs.size());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private boolean submit(TaskSpec spec) throws InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                api.submit(spec);
                if (attempt > 1) {
                    log.say("submitted %s (after %d tries)", spec.getTaskId(), attempt);
                }
                return true;
            } catch (SchedulerException | IllegalStateException e) {
                if (System.nanoTime() - deadline > 0) {
                    log.say("could not submit %s before the deadline: %s", spec.getTaskId(), e);
                    return false;
                }
                Thread.sleep(RETRY_MILLIS);
            }
        }
    }
}
