package io.rlscheduler.chaos;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What a chaos run does. Immutable and thread-safe; built by {@link #builder()} or
 * {@link #parse(String[])} from the command line.
 *
 * <pre>
 *  option           default     meaning
 *  ---------------  ----------  -----------------------------------------------------------------
 *  --seed N         random      the fault schedule and task parameters (printed); the same seed
 *                               gives the same schedule, while process timing still varies
 *  --tasks N        40          tasks to submit, at least 1
 *  --duration-s N   120         length of the chaos phase in seconds, at least 5
 *  --budget-s N     270         the whole run in seconds, start to verdict, at least
 *                               duration + 30; bounds the wait for the tasks
 *  --workdir PATH   a new temp  logs, run directories and every process's output
 *                   directory
 *  --scripts PATH   ./scripts   the scripts directory (chaos_task.py and train.py)
 * </pre>
 */
public final class ChaosOptions {

    public static final int DEFAULT_TASKS = 40;
    public static final Duration DEFAULT_DURATION = Duration.ofSeconds(120);
    public static final Duration DEFAULT_BUDGET = Duration.ofSeconds(270);
    public static final Path DEFAULT_SCRIPTS = Path.of("scripts");

    /** The run after the chaos phase, at least: heal, drain, check. */
    static final Duration MIN_BUDGET_BEYOND_DURATION = Duration.ofSeconds(30);

    static final String USAGE = "usage: ChaosRun [--seed N] [--tasks N] [--duration-s N] [--budget-s N]"
            + " [--workdir PATH] [--scripts PATH]";

    private final long seed;
    private final int tasks;
    private final Duration duration;
    private final Duration budget;
    private final Path workdir;
    private final Path scripts;

    private ChaosOptions(Builder b) {
        this.seed = b.seed;
        this.tasks = b.tasks;
        this.duration = b.duration;
        this.budget = b.budget;
        this.workdir = b.workdir;
        this.scripts = b.scripts;
    }

    /** Returns a builder with a random seed and every other setting at its default. */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns the options of a command line of {@code --name value} pairs (see the table above).
     *
     * @throws IllegalArgumentException for an unknown option, a missing or bad value
     */
    static ChaosOptions parse(String[] argv) {
        Builder b = builder();
        for (int i = 0; i < argv.length; i++) {
            String a = argv[i];
            if (i + 1 >= argv.length) {
                throw new IllegalArgumentException("missing value for " + a);
            }
            String v = argv[++i];
            switch (a) {
                case "--seed" -> b.seed(Long.parseLong(v));
                case "--tasks" -> b.tasks(Integer.parseInt(v));
                case "--duration-s" -> b.duration(Duration.ofSeconds(Integer.parseInt(v)));
                case "--budget-s" -> b.budget(Duration.ofSeconds(Integer.parseInt(v)));
                case "--workdir" -> b.workdir(Path.of(v));
                case "--scripts" -> b.scripts(Path.of(v));
                default -> throw new IllegalArgumentException("unknown option " + a);
            }
        }
        return b.build();
    }

    /** Returns whether the command line asks for the usage ({@code -h} or {@code --help} where an option goes). */
    static boolean asksForHelp(String[] argv) {
        for (int i = 0; i < argv.length; i += 2) {
            if (argv[i].equals("-h") || argv[i].equals("--help")) {
                return true;
            }
        }
        return false;
    }

    /** Returns the seed of the fault schedule and the task parameters. */
    public long getSeed() {
        return seed;
    }

    /** Returns how many tasks the run submits. */
    public int getTasks() {
        return tasks;
    }

    /** Returns the length of the chaos phase. */
    public Duration getDuration() {
        return duration;
    }

    /** Returns the time the whole run may take, start to verdict. */
    public Duration getBudget() {
        return budget;
    }

    /** Returns the work directory, or empty for a new temporary one. */
    public Optional<Path> getWorkdir() {
        return Optional.ofNullable(workdir);
    }

    /** Returns the scripts directory, which holds {@code chaos_task.py} and {@code train.py}. */
    public Path getScripts() {
        return scripts;
    }

    /** Builds {@link ChaosOptions}; not thread-safe. */
    public static final class Builder {

        private long seed = ThreadLocalRandom.current().nextLong(1, 1_000_000);
        private int tasks = DEFAULT_TASKS;
        private Duration duration = DEFAULT_DURATION;
        private Duration budget = DEFAULT_BUDGET;
        private Path workdir;
        private Path scripts = DEFAULT_SCRIPTS;

        private Builder() {
        }

        /** Sets the seed; by default a random one between 1 and 999,999. */
        public Builder seed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * Sets how many tasks to submit; default 40.
         *
         * @throws IllegalArgumentException if below 1
         */
        public Builder tasks(int tasks) {
            if (tasks < 1) {
                throw new IllegalArgumentException("--tasks must be at least 1");
            }
            this.tasks = tasks;
            return this;
        }

        /**
         * Sets the length of the chaos phase; default 120 s.
         *
         * @throws IllegalArgumentException if below 5 s
         */
        public Builder duration(Duration duration) {
            if (Objects.requireNonNull(duration, "duration").compareTo(Duration.ofSeconds(5)) < 0) {
                throw new IllegalArgumentException("--duration-s must be at least 5");
            }
            this.duration = duration;
            return this;
        }

        /** Sets the time the whole run may take; default 270 s, at least the duration + 30 s (checked by {@link #build()}). */
        public Builder budget(Duration budget) {
            this.budget = Objects.requireNonNull(budget, "budget");
            return this;
        }

        /** Sets the work directory; by default a new temporary directory. */
        public Builder workdir(Path dir) {
            this.workdir = Objects.requireNonNull(dir, "workdir");
            return this;
        }

        /** Sets the scripts directory; default {@code ./scripts}. */
        public Builder scripts(Path dir) {
            this.scripts = Objects.requireNonNull(dir, "scripts");
            return this;
        }

        /**
         * Returns the options.
         *
         * @throws IllegalArgumentException if the budget is shorter than the duration + 30 s
         */
        public ChaosOptions build() {
            if (budget.compareTo(duration.plus(MIN_BUDGET_BEYOND_DURATION)) < 0) {
                throw new IllegalArgumentException("--budget-s must be at least --duration-s + 30");
            }
            return new ChaosOptions(this);
        }
    }
}
