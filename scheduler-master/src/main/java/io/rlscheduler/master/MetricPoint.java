package io.rlscheduler.master;

import io.rlscheduler.core.internal.MetricLines;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One metrics line of a task's output, from {@link TaskHandle#followMetrics}: a line
 * {@code RLS_METRIC {json object}} that the script printed (on stdout or stderr), with the attempt
 * and the line's sequence number in it. The values are the object's, in its order: text, booleans,
 * whole numbers as Integer, Long or (beyond a long) BigInteger, other numbers as Double, lists and
 * maps (unmodifiable). A line whose JSON holds NaN or Infinity (Python's {@code json.dumps}
 * default for them) is not valid JSON and is skipped, as the worker skips it for final metrics.
 * Immutable.
 */
public final class MetricPoint {

    /** The prefix of a metrics line, as the worker reads final metrics from it. */
    public static final String PREFIX = MetricLines.PREFIX;

    private final String taskId;
    private final int attempt;
    private final long sequence;
    private final Map<String, Object> values;

    private MetricPoint(String taskId, int attempt, long sequence, Map<String, Object> values) {
        this.taskId = taskId;
        this.attempt = attempt;
        this.sequence = sequence;
        this.values = values;
    }

    /**
     * The metrics point a log line carries, or null when it is not a metrics line (another line,
     * an END_OF_STREAM, or a line with the prefix whose rest is not a JSON object).
     */
    public static MetricPoint of(LogRecord record) {
        if (!record.isLine()) {
            return null;
        }
        Map<String, Object> values = MetricLines.parseValues(record.getText());
        if (values == null) {
            return null;
        }
        Map<String, Object> frozen = new LinkedHashMap<>();
        values.forEach((k, v) -> frozen.put(k, RunComparison.freeze(v)));
        return new MetricPoint(record.getTaskId(), record.getAttempt(), record.getSequence(),
                Collections.unmodifiableMap(frozen));
    }

    /** Returns the task id. */
    public String getTaskId() { return taskId; }

    /** Returns the attempt that printed it (from 1; 0 when the log does not say). */
    public int getAttempt() { return attempt; }

    /** Returns the line's sequence number within its attempt's output, from 1. */
    public long getSequence() { return sequence; }

    /** Returns the metrics, by name. */
    public Map<String, Object> getValues() { return values; }

    /** Returns one metric, or null when this point lacks it. */
    public Object get(String name) {
        return values.get(Objects.requireNonNull(name, "name"));
    }

    @Override
    public String toString() {
        return taskId + " attempt " + attempt + " line " + sequence + " " + values;
    }
}
