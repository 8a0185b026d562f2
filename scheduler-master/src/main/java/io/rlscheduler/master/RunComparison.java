package io.rlscheduler.master;

import io.rlscheduler.core.internal.Json;
import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.SchedulerException;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import java.io.IOException;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;

/**
 * Runs side by side, from {@link SchedulerMaster#compare}: what each task was given (script and
 * parameters, exactly as submitted) and what it reported (its state and final metrics, the latest
 * value of each key its script printed in {@code RLS_METRIC} lines), with the parameters that
 * differ between them picked out, and the code each ran: the provenance of its attempts
 * ({@link AttemptProvenance}), with runs whose code differed flagged ({@link #isCodeDiffering()}).
 * A snapshot of the task records at the call. Immutable.
 *
 * <p>Parameters are equal when the script gets the same value: whole numbers by value, numbers
 * with a fraction or exponent by value, text and booleans exactly; {@code 300} and {@code 300.0}
 * differ (a script that reads the one as an integer fails on the other). A parameter that some
 * runs lack differs. Values are what JSON gives: text, booleans, whole numbers as Integer or Long
 * (whichever holds the value; read them through {@link Number}), other numbers as Double, and for
 * metrics also lists and maps (unmodifiable).
 */
public final class RunComparison {

    /** The most runs one comparison takes. */
    public static final int MAX_RUNS = 1000;


    /** One run: the task's script, parameters, state, final metrics and its attempts' provenance. Immutable. */
    public static final class Run {
        private final TaskRecord record;
        private final String script;
        private final Map<String, Object> parameters;
        private final Map<String, Object> finalMetrics;
        private final List<AttemptProvenance> provenance;

        private Run(TaskRecord record, String script, Map<String, Object> parameters, Map<String, Object> finalMetrics,
                    List<AttemptProvenance> provenance) {
            this.record = record;
            this.script = script;
            this.parameters = Collections.unmodifiableMap(parameters);
            this.finalMetrics = Collections.unmodifiableMap(finalMetrics);
            this.provenance = List.copyOf(provenance);
        }

        /** Returns the task id. */
        public String getTaskId() { return record.getTaskId(); }
        /** Returns the task's state at the comparison (a run still going has no final metrics yet). */
        public TaskState getState() { return record.getState(); }
        /** Returns the script it ran. */
        public String getScript() { return script; }
        /** Returns its parameters as submitted, in their order (value types: see the class comment). */
        public Map<String, Object> getParameters() { return parameters; }
        /** Returns its final metrics (empty while it runs, or when its script printed none). */
        public Map<String, Object> getFinalMetrics() { return finalMetrics; }
        /** Returns the task's full record. */
        public TaskRecord getRecord() { return record; }
        /**
         * Returns the provenance of its attempts, oldest first: the code each ran and where (see
         * {@link TaskHandle#provenance()}); empty while none has been recorded (a queued run).
         */
        public List<AttemptProvenance> getProvenance() { return provenance; }

        @Override
        public String toString() {
            return getTaskId() + " " + getState() + " " + script + " " + parameters + " -> " + finalMetrics;
        }
    }

    private final List<Run> runs;
    private final Map<String, Object> commonParameters;
    private final List<String> varyingParameters;
    private final List<String> metricNames;
    private final boolean scriptsDiffer;
    private final boolean codeDiffering;

    private RunComparison(List<Run> runs) {
        this.runs = List.copyOf(runs);
        TreeSet<String> names = new TreeSet<>();
        TreeSet<String> metrics = new TreeSet<>();
        for (Run r : runs) {
            names.addAll(r.parameters.keySet());
            metrics.addAll(r.finalMetrics.keySet());
        }
        Map<String, Object> common = new LinkedHashMap<>();
        List<String> varying = new ArrayList<>();
        for (String name : names) {
            Object first = runs.get(0).parameters.get(name);
            boolean same = runs.stream().allMatch(r -> r.parameters.containsKey(name) && same(first, r.parameters.get(name)));
            if (same) {
                common.put(name, first);
            } else {
                varying.add(name);
            }
        }
        this.commonParameters = Collections.unmodifiableMap(common);
        this.varyingParameters = List.copyOf(varying);
        this.metricNames = List.copyOf(metrics);
        this.scriptsDiffer = runs.stream().map(Run::getScript).distinct().count() > 1;
        this.codeDiffering = codeDiffers(runs.stream().flatMap(r -> r.provenance.stream()).toList());
    }

    /** Whether two of these attempts ran different code ({@link AttemptProvenance#hasSameCode}). */
    private static boolean codeDiffers(List<AttemptProvenance> attempts) {
        return attempts.stream().anyMatch(p -> !p.hasSameCode(attempts.get(0)));
    }

    /**
     * Builds a comparison of the given task records, in their order.
     *
     * @param provenance for each record, its attempts' provenance, oldest first
     * @throws SchedulerException if a record's spec or final metrics are not a JSON object (not
     *                            written by this library: a record edited by hand)
     */
    static RunComparison of(List<TaskRecord> records, List<List<AttemptProvenance>> provenance) {
        if (provenance.size() != records.size()) {
            throw new IllegalArgumentException("one provenance list per record: " + records.size() + ", " + provenance.size());
        }
        List<Run> runs = new ArrayList<>(records.size());
        java.util.Iterator<List<AttemptProvenance>> attempts = provenance.iterator();
        for (TaskRecord record : records) {
            Map<String, Object> spec = object(record, "spec", record.getSpecJson());
            Map<String, Object> parameters = new LinkedHashMap<>();
            if (spec.get("parameters") instanceof Map<?, ?> given) {
                given.forEach((k, v) -> parameters.put(String.valueOf(k), freeze(v)));
            }
            Map<String, Object> metrics = new LinkedHashMap<>();
            object(record, "final metrics", record.getFinalMetricsJson()).forEach((k, v) -> metrics.put(k, freeze(v)));
            runs.add(new Run(record, String.valueOf(spec.getOrDefault("script", "")), parameters, metrics, attempts.next()));
        }
        return new RunComparison(runs);
    }

    /** A JSON object of a record: empty for none. */
    private static Map<String, Object> object(TaskRecord record, String what, String json) {
        if (json == null || json.isEmpty()) {
            return Map.of();
        }
        try {
            Map<String, Object> value = Json.map(json);
            if (value == null) {
                throw new IOException("null, not an object");
            }
            return value;
        } catch (IOException | RuntimeException e) {
            throw new SchedulerException("task " + record.getTaskId() + ": its " + what + " are not readable: "
                    + e.getMessage(), false, e);
        }
    }

    /** A JSON value with its lists and maps made unmodifiable, all the way down. */
    static Object freeze(Object value) {
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> copy = new LinkedHashMap<>();
            map.forEach((k, v) -> copy.put(String.valueOf(k), freeze(v)));
            return Collections.unmodifiableMap(copy);
        }
        if (value instanceof List<?> list) {
            List<Object> copy = new ArrayList<>(list.size());
            list.forEach(v -> copy.add(freeze(v)));
            return Collections.unmodifiableList(copy);
        }
        return value;
    }

    private static boolean integral(Object n) {
        return n instanceof Integer || n instanceof Long || n instanceof java.math.BigInteger || n instanceof Short
                || n instanceof Byte;
    }

    /**
     * Whether two parameter values are the same for a script: whole numbers by value, other
     * numbers by value (as Double.compare: -0.0 is not 0.0), a whole number never the same as
     * one with a fraction or exponent, anything else by equals.
     */
    private static boolean same(Object a, Object b) {
        if (a instanceof Number x && b instanceof Number y) {
            if (integral(x) && integral(y)) {
                return new BigDecimal(x.toString()).compareTo(new BigDecimal(y.toString())) == 0;
            }
            return !integral(x) && !integral(y) && Double.compare(x.doubleValue(), y.doubleValue()) == 0;
        }
        return Objects.equals(a, b);
    }

    /** Orders two metric values (NaN is never passed): exactly when both are finite, else as doubles. */
    private static int compareNumbers(Number a, Number b) {
        if (finite(a) && finite(b)) {
            return decimal(a).compareTo(decimal(b));
        }
        return Double.compare(a.doubleValue(), b.doubleValue());
    }

    private static boolean finite(Number n) {
        return !(n instanceof Double || n instanceof Float) || Double.isFinite(n.doubleValue());
    }

    private static BigDecimal decimal(Number n) {
        return n instanceof Double || n instanceof Float ? BigDecimal.valueOf(n.doubleValue()) : new BigDecimal(n.toString());
    }

    /** Returns the runs, in the order asked for. */
    public List<Run> getRuns() { return runs; }

    /** Returns the parameters every run has with the same value, by name. */
    public Map<String, Object> getCommonParameters() { return commonParameters; }

    /** Returns the names of the parameters whose values differ between the runs, or that some lack, sorted. */
    public List<String> getVaryingParameters() { return varyingParameters; }

    /** Returns the name of every final metric some run reported, sorted. */
    public List<String> getMetricNames() { return metricNames; }

    /**
     * Returns whether the runs' code differed: two of their recorded attempts (of two runs, or two
     * attempts of one run) differ in the script's SHA-256, the git commit of its work tree, or
     * whether that tree was dirty ({@link AttemptProvenance#hasSameCode}). Runs without recorded
     * provenance are not counted; so false when none has any. Runs of one spec may differ when
     * their workers' copies of the script differ, or the script changed between them.
     */
    public boolean isCodeDiffering() { return codeDiffering; }

    /**
     * Returns the run with the best numeric value of a final metric: the highest, or the lowest
     * when {@code higherIsBetter} is false; among equals, the first in order. Runs that did not
     * report it as a number (or reported NaN) are left out; empty when none did. A value too large
     * for a double counts as infinite.
     */
    public Optional<Run> best(String metric, boolean higherIsBetter) {
        Objects.requireNonNull(metric, "metric");
        Run best = null;
        Number bestValue = null;
        for (Run r : runs) {
            if (r.finalMetrics.get(metric) instanceof Number n && !Double.isNaN(n.doubleValue())) {
                int c = bestValue == null ? 0 : compareNumbers(n, bestValue);
                if (bestValue == null || (higherIsBetter ? c > 0 : c < 0)) {
                    best = r;
                    bestValue = n;
                }
            }
        }
        return Optional.ofNullable(best);
    }

    /**
     * Returns the comparison as a plain-text table: a line with the parameters all runs share
     * (and the code they ran, when it is known and the same), then one row per run with its task
     * id, state, script (when they differ), code (when it differs: the latest attempt's script
     * SHA-256 and git commit, shortened, {@code +dirty} for a dirty tree, and
     * {@code (attempts differ)} when the run's own attempts ran different code), the parameters
     * that differ and every final metric ({@code -} where a run has none).
     */
    public String toTable() {
        List<String> header = new ArrayList<>(List.of("task", "state"));
        if (scriptsDiffer) {
            header.add("script");
        }
        if (codeDiffering) {
            header.add("code");
        }
        varyingParameters.forEach(p -> header.add(oneLine(p)));
        metricNames.forEach(m -> header.add(oneLine(m)));
        List<List<String>> rows = new ArrayList<>();
        rows.add(header);
        for (Run r : runs) {
            List<String> row = new ArrayList<>(List.of(r.getTaskId(), r.getState().name()));
            if (scriptsDiffer) {
                row.add(oneLine(r.script));
            }
            if (codeDiffering) {
                row.add(r.provenance.isEmpty() ? "-" : code(r.provenance.get(r.provenance.size() - 1))
                        + (codeDiffers(r.provenance) ? " (attempts differ)" : ""));
            }
            varyingParameters.forEach(p -> row.add(text(r.parameters, p)));
            metricNames.forEach(m -> row.add(text(r.finalMetrics, m)));
            rows.add(row);
        }
        int[] widths = new int[header.size()];
        java.util.Arrays.fill(widths, 1);
        for (List<String> row : rows) {
            for (int i = 0; i < row.size(); i++) {
                widths[i] = Math.max(widths[i], row.get(i).length());
            }
        }
        StringBuilder out = new StringBuilder();
        out.append(runs.size()).append(runs.size() == 1 ? " run" : " runs");
        if (!scriptsDiffer) {
            out.append(" of ").append(oneLine(runs.get(0).script));
        }
        if (codeDiffering) {
            out.append(", their code differing");
        } else {
            runs.stream().flatMap(r -> r.provenance.stream()).findFirst().ifPresent(p -> out.append(" at ").append(code(p)));
        }
        out.append("; the same in all: ").append(commonParameters.isEmpty() ? "(no parameter)" : commonParameters.entrySet()
                .stream().map(e -> e.getKey() + "=" + oneLine(String.valueOf(e.getValue()))).reduce((a, b) -> a + ", " + b).orElse("")).append('\n');
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.size(); i++) {
                line.append(i == 0 ? "" : "  ").append(String.format("%-" + widths[i] + "s", row.get(i)));
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
        return out.toString();
    }

    /** The code an attempt ran, shortened for a table: {@code sha256:<12 hex> git:<12 hex>[+dirty]}. */
    private static String code(AttemptProvenance p) {
        if (p.getScriptSha256() == null && p.getGitCommit() == null) {
            return p.getScriptFile() == null ? "(no script file)" : "(script unreadable)";
        }
        StringBuilder code = new StringBuilder();
        code.append("sha256:").append(p.getScriptSha256() == null ? "?" : shortened(p.getScriptSha256()));
        if (p.getGitCommit() != null) {
            code.append(" git:").append(shortened(p.getGitCommit())).append(p.isGitDirty() ? "+dirty" : "");
        }
        return oneLine(code.toString());
    }

    private static String shortened(String hex) {
        return hex.length() <= 12 ? hex : hex.substring(0, 12);
    }

    private static String text(Map<String, Object> values, String name) {
        return values.containsKey(name) ? oneLine(String.valueOf(values.get(name))) : "-";
    }

    /** Text for one cell: line breaks and tabs written as escapes, so a row stays one line. */
    private static String oneLine(String text) {
        return text.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t");
    }

    @Override
    public String toString() {
        return toTable();
    }
}
