package io.rlscheduler.master;

import io.rlscheduler.core.TaskIds;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Many runs submitted as one, under one sweep id: a base spec, a grid of parameter values and/or
 * a list of seeds. The runs are the grid's product (parameters in the order given, the last
 * varying fastest) times the seeds, each the base with those parameters set, with the task id
 * {@code <sweep id>-<index, 3 digits>}. Submitted by {@link SchedulerMaster#submitSweep}, listed and
 * compared by the sweep's id. Immutable and thread-safe.
 *
 * <pre>{@code
 * SweepSpec sweep = SweepSpec.of(TaskSpec.python("train.py").param("episodes", 500L).gpus(1).owner("alice").build())
 *     .grid("lr", 0.01, 0.05, 0.1).seeds(1, 2).name("lr scan").build();
 * Sweep submitted = master.submitSweep(sweep); // 6 runs
 * }</pre>
 */
public final class SweepSpec {

    /** The most runs one sweep may have. */
    public static final int MAX_RUNS = 1000;
    private static final Pattern PARAM = Pattern.compile("[A-Za-z][A-Za-z0-9_-]{0,63}");

    private final TaskSpec base;
    private final String sweepId;
    private final String name;
    private final Map<String, List<Object>> grid;
    private final List<Long> seeds;
    private final String seedParameter;

    private SweepSpec(Builder b) {
        this.base = b.base;
        this.sweepId = b.sweepId;
        this.name = b.name;
        Map<String, List<Object>> g = new LinkedHashMap<>();
        b.grid.forEach((k, v) -> g.put(k, List.copyOf(v)));
        this.grid = Collections.unmodifiableMap(g);
        this.seeds = List.copyOf(b.seeds);
        this.seedParameter = b.seedParameter;
    }

    /** Starts a sweep of runs like {@code base} (its task id is not used). */
    public static Builder of(TaskSpec base) {
        return new Builder(Objects.requireNonNull(base, "base"));
    }

    /** Returns the base spec. */
    public TaskSpec getBase() { return base; }

    /** Returns the sweep id given, or null for one made at submission. */
    public String getSweepId() { return sweepId; }

    /** Returns the sweep's name, or null. */
    public String getName() { return name; }

    /** Returns the grid: parameter name to its values, in the order given; unmodifiable. */
    public Map<String, List<Object>> getGrid() { return grid; }

    /** Returns the seeds, empty for none. */
    public List<Long> getSeeds() { return seeds; }

    /** Returns the parameter each seed is given as. */
    public String getSeedParameter() { return seedParameter; }

    /** Returns how many runs the sweep has. */
    public int size() {
        long n = Math.max(1, seeds.size());
        for (List<Object> values : grid.values()) {
            n *= values.size();
        }
        return (int) n;
    }

    /** Returns the parameters of each run, in run order. */
    public List<Map<String, Object>> runParameters() {
        List<Map<String, Object>> runs = new ArrayList<>();
        runs.add(new LinkedHashMap<>());
        for (Map.Entry<String, List<Object>> axis : grid.entrySet()) {
            List<Map<String, Object>> next = new ArrayList<>();
            for (Map<String, Object> run : runs) {
                for (Object value : axis.getValue()) {
                    Map<String, Object> params = new LinkedHashMap<>(run);
                    params.put(axis.getKey(), value);
                    next.add(params);
                }
            }
            runs = next;
        }
        if (!seeds.isEmpty()) {
            List<Map<String, Object>> next = new ArrayList<>();
            for (Map<String, Object> run : runs) {
                for (Long seed : seeds) {
                    Map<String, Object> params = new LinkedHashMap<>(run);
                    params.put(seedParameter, seed);
                    next.add(params);
                }
            }
            runs = next;
        }
        return runs;
    }

    /** Returns the task id of run {@code index} of sweep {@code sweepId}. */
    public static String runId(String sweepId, int index) {
        return sweepId + "-" + String.format("%03d", index);
    }

    /** Builds the runs' specs for {@code sweepId}, in run order. */
    List<TaskSpec> runs(String sweepId) {
        List<Map<String, Object>> params = runParameters();
        List<TaskSpec> specs = new ArrayList<>(params.size());
        for (int i = 0; i < params.size(); i++) {
            TaskSpec.Builder b = base.toBuilder().taskId(runId(sweepId, i));
            params.get(i).forEach((k, v) -> param(b, k, v));
            specs.add(b.build());
        }
        return specs;
    }

    static void param(TaskSpec.Builder b, String name, Object value) {
        if (value instanceof Boolean v) {
            b.param(name, v);
        } else if (value instanceof Long || value instanceof Integer || value instanceof Short || value instanceof Byte) {
            b.param(name, ((Number) value).longValue());
        } else if (value instanceof Number n) {
            b.param(name, n.doubleValue());
        } else if (value instanceof String s) {
            b.param(name, s);
        } else {
            throw new IllegalArgumentException("parameter " + name + ": a value must be a string, a number or a boolean, was "
                    + (value == null ? "null" : value.getClass().getSimpleName()));
        }
    }

    /** Builds a {@link SweepSpec}; every setter checks its input at once. */
    public static final class Builder {
        private final TaskSpec base;
        private String sweepId;
        private String name;
        private final Map<String, List<Object>> grid = new LinkedHashMap<>();
        private final List<Long> seeds = new ArrayList<>();
        private String seedParameter = "seed";

        private Builder(TaskSpec base) {
            this.base = base;
        }

        /**
         * Sets the sweep's id, for a submission that can be repeated safely (the same sweep gets the
         * existing one, its missing runs submitted). 1 to 120 of {@code [A-Za-z0-9._:-]}. Default: made
         * at submission, {@code sw-} and 10 hex digits.
         */
        public Builder id(String sweepId) {
            TaskIds.require(sweepId, "sweep id");
            if (sweepId.length() > 120) {
                throw new IllegalArgumentException("a sweep id must be at most 120 characters (its runs' ids add 4), was "
                        + sweepId.length());
            }
            this.sweepId = sweepId;
            return this;
        }

        /** Sets a name to show, at most 200 characters on one line. */
        public Builder name(String name) {
            if (name != null && (name.length() > 200 || name.indexOf('\n') >= 0 || name.indexOf('\r') >= 0)) {
                throw new IllegalArgumentException("a sweep name must be at most 200 characters on one line");
            }
            this.name = name;
            return this;
        }

        /** Adds an axis of the grid: a parameter and its values (strings, numbers or booleans), at least one. */
        public Builder grid(String parameter, Object... values) {
            return grid(parameter, List.of(Objects.requireNonNull(values, "values")));
        }

        /** Adds an axis of the grid: a parameter and its values (strings, numbers or booleans), at least one. */
        public Builder grid(String parameter, List<?> values) {
            requireParameter(parameter);
            if (values == null || values.isEmpty()) {
                throw new IllegalArgumentException("grid parameter " + parameter + " needs at least one value");
            }
            if (grid.containsKey(parameter)) {
                throw new IllegalArgumentException("grid parameter " + parameter + " is given twice");
            }
            List<Object> copy = new ArrayList<>();
            for (Object v : values) {
                param(TaskSpec.python("check.py"), parameter, v); // checks the value's type
                copy.add(v instanceof Integer || v instanceof Short || v instanceof Byte ? ((Number) v).longValue() : v);
            }
            grid.put(parameter, copy);
            return this;
        }

        /** Sets the seeds: each grid point runs once per seed, with the seed as {@link #seedParameter}. */
        public Builder seeds(long... seeds) {
            this.seeds.clear();
            for (long seed : seeds) {
                this.seeds.add(seed);
            }
            return this;
        }

        /** Sets the seeds: each grid point runs once per seed, with the seed as {@link #seedParameter}. */
        public Builder seeds(List<Long> seeds) {
            this.seeds.clear();
            seeds.forEach(s -> this.seeds.add(Objects.requireNonNull(s, "seed")));
            return this;
        }

        /** Sets the parameter each seed is given as; default {@code seed}. */
        public Builder seedParameter(String parameter) {
            this.seedParameter = requireParameter(parameter);
            return this;
        }

        /**
         * Returns the sweep spec.
         *
         * @throws IllegalArgumentException if it has no runs' worth of grid or seeds, more than
         *                                  {@value SweepSpec#MAX_RUNS} runs, or the seed parameter is also on the grid
         */
        public SweepSpec build() {
            if (grid.isEmpty() && seeds.isEmpty()) {
                throw new IllegalArgumentException("a sweep needs a grid or seeds");
            }
            if (!seeds.isEmpty() && grid.containsKey(seedParameter)) {
                throw new IllegalArgumentException("the seed parameter " + seedParameter + " is also on the grid");
            }
            if (seeds.stream().distinct().count() != seeds.size()) {
                throw new IllegalArgumentException("a seed is given twice");
            }
            long n = Math.max(1, seeds.size());
            for (List<Object> values : grid.values()) {
                n *= values.size();
                if (n > MAX_RUNS) {
                    break;
                }
            }
            if (n > MAX_RUNS) {
                throw new IllegalArgumentException("a sweep may have at most " + MAX_RUNS + " runs, this one has more");
            }
            return new SweepSpec(this);
        }

        private static String requireParameter(String name) {
            if (name == null || !PARAM.matcher(name).matches()) {
                throw new IllegalArgumentException("parameter name must be 1 to 64 of [A-Za-z0-9_-] starting with a letter, was '"
                        + name + "'");
            }
            return name;
        }
    }
}
