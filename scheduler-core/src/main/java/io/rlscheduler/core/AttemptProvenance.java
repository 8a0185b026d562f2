package io.rlscheduler.core;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * Where one attempt of a task ran and which code it ran: the worker and its machine's hostname,
 * the script file as resolved on that machine with its SHA-256 taken as the attempt started, the
 * git commit of the script's work tree and whether that tree had uncommitted changes, the
 * interpreter and its version, and the GPUs the attempt was given with their UUIDs.
 *
 * <p>The worker that holds the attempt computes it just after the attempt's script started and
 * stores it in Redis, fenced by the attempt's epoch: only the attempt that holds the task can write
 * its own provenance, so a stale attempt never overwrites it. Read with
 * {@code TaskHandle.provenance()} (or {@code ProvenanceRecords#of(String)}).
 * An attempt that has none (it never started, or its worker could not reach Redis) is absent from
 * a task's list.
 *
 * <p>What could not be known is null (or false for {@link #isGitDirty()}), never guessed: an
 * executor that runs its work inside the worker's JVM has no script file and no interpreter; a
 * script outside a git work tree (or on a machine without git) has no commit; a GPU that
 * nvidia-smi has not reported (GPU ids configured on a machine without it) has no UUID.
 * Immutable.
 */
public final class AttemptProvenance {

    /** A GPU an attempt was given. Immutable. */
    public static final class Gpu {
        private final int index;
        private final String uuid;

        Gpu(int index, String uuid) {
            this.index = index;
            this.uuid = uuid;
        }

        /** Returns the GPU's index, as {@code CUDA_VISIBLE_DEVICES} and nvidia-smi name it. */
        public int getIndex() {
            return index;
        }

        /**
         * Returns the GPU's UUID as nvidia-smi reports it ({@code GPU-...}), or null when the
         * worker has no report of a GPU with this index.
         */
        public String getUuid() {
            return uuid;
        }

        @Override
        public String toString() {
            return uuid == null ? index + "(uuid unknown)" : index + "(" + uuid + ")";
        }
    }

    private final String taskId;
    private final int attempt;
    private final long epoch;
    private final String workerId;
    private final String hostname;
    private final String scriptFile;
    private final String scriptSha256;
    private final String gitCommit;
    private final boolean gitDirty;
    private final String interpreter;
    private final String interpreterVersion;
    private final List<Gpu> gpus;

    AttemptProvenance(String taskId, int attempt, long epoch, String workerId, String hostname, String scriptFile,
                      String scriptSha256, String gitCommit, boolean gitDirty, String interpreter,
                      String interpreterVersion, List<Integer> gpuIds, List<String> gpuUuids) {
        if (gpuIds.size() != gpuUuids.size()) {
            throw new IllegalArgumentException("one UUID (or null) per GPU id: " + gpuIds + ", " + gpuUuids);
        }
        this.taskId = Objects.requireNonNull(taskId, "taskId");
        this.attempt = attempt;
        this.epoch = epoch;
        this.workerId = Objects.requireNonNull(workerId, "workerId");
        this.hostname = hostname;
        this.scriptFile = scriptFile;
        this.scriptSha256 = scriptSha256;
        this.gitCommit = gitCommit;
        this.gitDirty = gitCommit != null && gitDirty;
        this.interpreter = interpreter;
        this.interpreterVersion = interpreterVersion;
        List<Gpu> list = new ArrayList<>(gpuIds.size());
        for (int i = 0; i < gpuIds.size(); i++) {
            list.add(new Gpu(gpuIds.get(i), gpuUuids.get(i)));
        }
        this.gpus = Collections.unmodifiableList(list);
    }

    /** Returns the task id. */
    public String getTaskId() {
        return taskId;
    }

    /** Returns the attempt number, 1 for the first. */
    public int getAttempt() {
        return attempt;
    }

    /** Returns the fencing epoch of the attempt's assignment. */
    public long getEpoch() {
        return epoch;
    }

    /** Returns the worker that ran the attempt. */
    public String getWorkerId() {
        return workerId;
    }

    /** Returns the hostname of the worker's machine, or null if it could not be read. */
    public String getHostname() {
        return hostname;
    }

    /**
     * Returns the script file the attempt ran, as an absolute path on the worker's machine with
     * symbolic links resolved, or null for an executor that runs no file.
     */
    public String getScriptFile() {
        return scriptFile;
    }

    /**
     * Returns the SHA-256 of the script file's bytes, 64 lowercase hex digits, taken as the
     * attempt started; null when there is no script file or it could not be read.
     */
    public String getScriptSha256() {
        return scriptSha256;
    }

    /**
     * Returns the commit (40 hex digits; 64 in a SHA-256 repository) checked out in the git work
     * tree the script file lies in,
     * or null when it lies in none, the tree has no commit yet, or git is missing or did not
     * answer in time.
     */
    public String getGitCommit() {
        return gitCommit;
    }

    /**
     * Returns whether the script's work tree differed from its commit as the attempt started: a
     * tracked file changed (staged or not), or the script itself not committed (untracked or
     * ignored). Untracked files other than the script do not count. False when there is no commit
     * ({@link #getGitCommit()} null).
     */
    public boolean isGitDirty() {
        return gitDirty;
    }

    /**
     * Returns the interpreter that ran the script, as the executor names it (for a python script
     * the python executable, such as {@code python3}), or null for an executor that runs no file.
     */
    public String getInterpreter() {
        return interpreter;
    }

    /**
     * Returns the first line the interpreter prints for {@code --version} (for python, such as
     * {@code Python 3.11.7}), or null when there is no interpreter or it did not say.
     */
    public String getInterpreterVersion() {
        return interpreterVersion;
    }

    /** Returns the GPUs the attempt was given, by ascending index; unmodifiable. */
    public List<Gpu> getGpus() {
        return gpus;
    }

    /**
     * Returns whether this attempt ran the same code as {@code other}, as far as provenance tells:
     * the same script SHA-256, the same git commit and the same dirty flag (all compared as they
     * are, nulls included). Two attempts from dirty trees of one commit count as the same when
     * their scripts are, although other changed files of the trees may differ.
     */
    public boolean hasSameCode(AttemptProvenance other) {
        return Objects.equals(scriptSha256, other.scriptSha256) && Objects.equals(gitCommit, other.gitCommit)
                && gitDirty == other.gitDirty;
    }

    @Override
    public String toString() {
        return "AttemptProvenance{taskId=" + taskId + ", attempt=" + attempt + ", epoch=" + epoch + ", workerId="
                + workerId + ", hostname=" + hostname + ", scriptFile=" + scriptFile + ", scriptSha256=" + scriptSha256
                + ", gitCommit=" + gitCommit + ", gitDirty=" + gitDirty + ", interpreter=" + interpreter
                + ", interpreterVersion=" + interpreterVersion + ", gpus=" + gpus + '}';
    }
}
