package io.rlscheduler.chaos;

import java.io.PrintStream;

/**
 * A chaos run: a whole cluster of separate processes doing real training while faults are
 * injected at random, then a check, from the task records, the checkpoints committed, the log
 * files and the tasks' own marks, that nothing was lost, run twice or run twice at once, and that
 * every resumed attempt started from the newest checkpoint committed before the failure.
 *
 * <p>The cluster ({@link ChaosCluster}): Redis with AOF, two masters and three workers, each a JVM
 * of its own with short leases (each worker its own run root, all one directory store), and a
 * standby-only master in this JVM that submits and reads. The tasks ({@link Workload}) run
 * {@code scripts/chaos_task.py}: real {@code train.py} training, which marks each checkpoint it
 * saves, that also says what it resumed from, marks when each attempt started and stopped, by
 * epoch, and copies what it prints.
 * The chaos phase ({@link ChaosOptions#getDuration()}) submits the tasks spread over its first
 * 70% and meanwhile kills and freezes workers, kills the leader master, and kills and restarts
 * Redis once ({@link FaultPlan}, {@link FaultInjector}). Then the faults stop, everything stopped
 * is brought back, and the run waits (bounded) for every task to end ({@link ChaosDriver}) and
 * checks each ({@link ChaosChecks}).
 *
 * <p>The last line is {@code chaos: N tasks, S succeeded exactly once, L lost, D duplicated, O
 * overlapping, R resumed from another worker's checkpoint}; the exit code is 0 only if S = N and
 * L = D = O = 0, 1 if not, 2 if the run itself
 * failed or the command line is wrong. Run it from the repository root (it runs
 * {@code scripts/chaos_task.py} and {@code scripts/train.py}), through {@code scripts/chaos.sh};
 * the options are those of {@link ChaosOptions}.
 */
public final class ChaosRun {

    private ChaosRun() {
    }

    /** Runs the drill with the options of the command line and exits with its verdict. */
    public static void main(String[] argv) {
        if (ChaosOptions.asksForHelp(argv)) {
            System.err.println(ChaosOptions.USAGE);
            System.exit(2);
            return;
        }
        ChaosOptions options;
        try {
            options = ChaosOptions.parse(argv);
        } catch (IllegalArgumentException e) {
            System.err.println("chaos: " + e.getMessage());
            System.err.println(ChaosOptions.USAGE);
            System.exit(2);
            return;
        }
        // The in-process master's Redis client would print a warning for every reconnect attempt
        // while Redis is down on purpose; the run reports that itself.
        org.slf4j.Logger lettuce = org.slf4j.LoggerFactory.getLogger("io.lettuce");
        if (lettuce instanceof ch.qos.logback.classic.Logger logback) {
            logback.setLevel(ch.qos.logback.classic.Level.ERROR);
        }
        int code;
        try {
            ChaosReport report = run(options, System.out);
            code = report.isClean() ? 0 : 1;
        } catch (Exception e) {
            System.out.flush();
            System.err.println("chaos: the run itself failed (seed " + options.getSeed() + "): " + e);
            e.printStackTrace();
            code = 2;
        }
        System.out.flush();
        System.exit(code);
    }

    /**
     * Runs the whole drill and returns the verdict; the last line printed to {@code out} is
     * {@link ChaosReport#summary()}. Every process started is stopped before it returns or
     * throws, and by a shutdown hook if the JVM goes down meanwhile.
     */
    public static ChaosReport run(ChaosOptions options, PrintStream out) throws Exception {
        ChaosDriver driver = new ChaosDriver(options, new RunLog(out));
        Thread hook = new Thread(driver::close, "chaos-cleanup");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            return driver.execute();
        } finally {
            driver.close();
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException shuttingDown) {
                // The hook runs anyway, and closing is idempotent.
            }
        }
    }
}
