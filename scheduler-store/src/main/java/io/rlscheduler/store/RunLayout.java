package io.rlscheduler.store;

/**
 * Where a run's things lie in an {@link ArtifactStore}, the one layout every worker and master
 * uses:
 * <pre>
 * tasks/TASK/checkpoints/CHECKPOINT/files/PATH      a checkpoint's files, PATH relative to RLS_CHECKPOINT_DIR
 * tasks/TASK/checkpoints/CHECKPOINT/manifest.json   written after its files; Redis points at it once committed
 * tasks/TASK/outputs/attempt-N/PATH                 the files an attempt left in its run directory
 * tasks/TASK/outputs/attempt-N.manifest.json        written after them
 * tasks/TASK/log                                    the run's log, once it ended (the master's log file format)
 * </pre>
 * CHECKPOINT is {@code e<epoch>-<number>}: unique per task, so an attempt's files never overwrite
 * another's, and a stale attempt's upload lies where nothing points at it until it is collected.
 */
public final class RunLayout {

    /** A checkpoint's manifest's name in its directory: {@value}. */
    public static final String MANIFEST = "manifest.json";

    private RunLayout() {
    }

    /** Returns the prefix of everything of one task. */
    public static String task(String taskId) {
        return StoreKeys.join("tasks", taskId);
    }

    /** Returns the prefix of every checkpoint of a task. */
    public static String checkpoints(String taskId) {
        return StoreKeys.join("tasks", taskId, "checkpoints");
    }

    /** Returns the id of a task's checkpoint: {@code e<epoch>-<number>}. */
    public static String checkpointId(long epoch, int number) {
        return "e" + epoch + "-" + number;
    }

    /** Returns the prefix of one checkpoint (its files and manifest). */
    public static String checkpoint(String taskId, String checkpointId) {
        return StoreKeys.join("tasks", taskId, "checkpoints", checkpointId);
    }

    /** Returns the key of one file of a checkpoint; {@code path} is relative to the checkpoint directory. */
    public static String checkpointFile(String taskId, String checkpointId, String path) {
        return StoreKeys.join("tasks", taskId, "checkpoints", checkpointId, "files", path);
    }

    /** Returns the key of a checkpoint's manifest. */
    public static String checkpointManifest(String taskId, String checkpointId) {
        return StoreKeys.join("tasks", taskId, "checkpoints", checkpointId, MANIFEST);
    }

    /** Returns the prefix of an attempt's outputs. */
    public static String outputs(String taskId, int attempt) {
        return StoreKeys.join("tasks", taskId, "outputs", "attempt-" + attempt);
    }

    /** Returns the key of an attempt's outputs manifest. */
    public static String outputsManifest(String taskId, int attempt) {
        return StoreKeys.join("tasks", taskId, "outputs", "attempt-" + attempt + "." + MANIFEST);
    }

    /** Returns the key of a run's ended log. */
    public static String log(String taskId) {
        return StoreKeys.join("tasks", taskId, "log");
    }
}
