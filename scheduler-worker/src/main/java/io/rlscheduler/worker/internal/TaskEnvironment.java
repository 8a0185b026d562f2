package io.rlscheduler.worker.internal;

import io.rlscheduler.core.internal.ReservedEnvironment;
import io.rlscheduler.worker.TaskContext;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The environment variables an executor sets for a task, over the worker's own environment.
 * The keys it sets itself (GPU selection and the {@code RLS_} namespace) cannot be overridden by
 * the task spec: a task that could set {@code CUDA_VISIBLE_DEVICES} could use GPUs reserved for
 * another.
 */
public final class TaskEnvironment {

    /** The GPUs the task may use, as CUDA device indices. */
    public static final String CUDA_VISIBLE_DEVICES = ReservedEnvironment.CUDA_VISIBLE_DEVICES;
    /**
     * How CUDA numbers devices. Set to {@code PCI_BUS_ID} so that ids mean what nvidia-smi shows;
     * CUDA's default ({@code FASTEST_FIRST}) can number a mixed machine's GPUs differently.
     */
    public static final String CUDA_DEVICE_ORDER = ReservedEnvironment.CUDA_DEVICE_ORDER;

    private TaskEnvironment() {
    }

    /**
     * Returns the variables to set for an attempt, in the order they are applied: the executor's
     * own, then the spec's.
     *
     * @throws IllegalArgumentException if the spec sets a reserved key, or a key or value is malformed
     */
    public static Map<String, String> variables(TaskContext context) {
        Map<String, String> env = new LinkedHashMap<>();
        env.put(CUDA_VISIBLE_DEVICES, gpuList(context.getGpuIds()));
        env.put(CUDA_DEVICE_ORDER, "PCI_BUS_ID");
        env.put("PYTHONUNBUFFERED", "1");
        env.put("RLS_TASK_ID", context.getTaskId());
        env.put("RLS_ATTEMPT", Integer.toString(context.getAttempt()));
        env.put("RLS_EPOCH", Long.toString(context.getEpoch()));
        env.put("RLS_TRACE_ID", context.getTraceId());
        env.put("RLS_RUN_DIR", context.getRunDir().toAbsolutePath().normalize().toString());
        env.put("RLS_CHECKPOINT_DIR", context.getCheckpointDir().toAbsolutePath().normalize().toString());
        env.put("RLS_PARAMS_FILE", context.getParametersFile().toAbsolutePath().normalize().toString());
        for (Map.Entry<String, String> e : env.entrySet()) {
            TaskParameters.checkNoNul("environment variable " + e.getKey(), e.getValue());
        }
        for (Map.Entry<String, String> e : context.getEnvironment().entrySet()) {
            String key = e.getKey();
            checkKey(key);
            if (ReservedEnvironment.isReserved(key)) {
                throw new IllegalArgumentException("the task's environment must not set " + key + ": "
                        + ReservedEnvironment.describe());
            }
            TaskParameters.checkNoNul("environment variable " + key, e.getValue());
            env.put(key, e.getValue());
        }
        return env;
    }

    /** Returns the ids joined by ',': the empty string for none, which hides every GPU. */
    public static String gpuList(List<Integer> gpuIds) {
        StringJoiner joiner = new StringJoiner(",");
        for (Integer id : gpuIds) {
            if (id == null || id < 0) {
                throw new IllegalArgumentException("GPU ids must be non-negative, were " + gpuIds);
            }
            joiner.add(id.toString());
        }
        return joiner.toString();
    }

    private static void checkKey(String key) {
        if (key.isEmpty() || key.indexOf('=') >= 0 || key.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("environment variable name must be non-empty without '=' or NUL: '"
                    + key.replace("\0", "\\0") + "'");
        }
    }
}
