package io.rlscheduler.worker;

import io.rlscheduler.core.TaskIds;
import io.rlscheduler.worker.internal.TaskParameters;

import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Map;
import java.util.Objects;

/**
 * Lays out the directories of task attempts under a run root:
 * <pre>
 * ROOT/TASK_ID/attempt-N/             one per attempt: the script's working directory
 * ROOT/TASK_ID/attempt-N/params.json  the parameters as a JSON object, in submission order
 * ROOT/TASK_ID/checkpoints/           shared by every attempt, so a retry resumes
 * </pre>
 * Immutable and thread-safe; preparing the same attempt twice is harmless (the parameter file is
 * replaced atomically).
 */
public final class RunDirectories {

    /** The parameter file's name in a run directory: {@value}. */
    public static final String PARAMS_FILE = "params.json";
    /** The checkpoint directory's name in a task's directory: {@value}. */
    public static final String CHECKPOINTS = "checkpoints";
    /** Prefix of a run directory's name, followed by the attempt number. */
    public static final String ATTEMPT_PREFIX = "attempt-";

    private final Path root;

    /**
     * Creates a layout under {@code root}, which is created when the first attempt is prepared.
     *
     * @param root the run root; made absolute
     */
    public RunDirectories(Path root) {
        this.root = Objects.requireNonNull(root, "root").toAbsolutePath().normalize();
    }

    /** Returns the run root (absolute). */
    public Path getRoot() {
        return root;
    }

    /**
     * Creates an attempt's run and checkpoint directories and writes its parameter file.
     *
     * @param taskId     a valid task id
     * @param attempt    the attempt number, 1 or more
     * @param parameters name to String, Number (finite) or Boolean, in order
     * @return where things are
     * @throws TaskLaunchException if the id is invalid or leads outside the root, a parameter has
     *                             another type, or the file system refuses
     */
    public Attempt prepare(String taskId, int attempt, Map<String, Object> parameters) throws TaskLaunchException {
        Objects.requireNonNull(parameters, "parameters");
        String name = "task " + taskId + " attempt " + attempt;
        if (!TaskIds.isValid(taskId)) {
            throw new TaskLaunchException(name + ": invalid task id", null);
        }
        if (attempt < 1) {
            throw new TaskLaunchException(name + ": attempt must be 1 or more", null);
        }
        Path taskDir = root.resolve(taskId).normalize();
        Path runDir = taskDir.resolve(ATTEMPT_PREFIX + attempt).normalize();
        Path checkpointDir = taskDir.resolve(CHECKPOINTS).normalize();
        // The id rules already exclude '/' and "..": checked again because a path escaping the
        // root here would let a submitter write anywhere the worker can.
        if (!taskDir.getParent().equals(root) || !runDir.startsWith(taskDir) || !checkpointDir.startsWith(taskDir)) {
            throw new TaskLaunchException(name + ": directories would lie outside the run root " + root, null);
        }
        byte[] json;
        try {
            json = TaskParameters.toJson(parameters);
        } catch (IllegalArgumentException e) {
            throw new TaskLaunchException(name + ": " + e.getMessage(), e);
        }
        Path paramsFile = runDir.resolve(PARAMS_FILE);
        try {
            Files.createDirectories(root);
            // Created one level at a time, refusing symbolic links, so nothing is ever created
            // through a link that leads out of the root.
            createOwnDirectory(name, taskDir);
            createOwnDirectory(name, runDir);
            createOwnDirectory(name, checkpointDir);
            Path temp = Files.createTempFile(runDir, PARAMS_FILE + ".", ".tmp");
            try {
                Files.write(temp, json);
                try {
                    Files.move(temp, paramsFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                } catch (AtomicMoveNotSupportedException e) {
                    Files.move(temp, paramsFile, StandardCopyOption.REPLACE_EXISTING);
                }
            } finally {
                Files.deleteIfExists(temp);
            }
        } catch (IOException e) {
            throw new TaskLaunchException(name + ": cannot prepare " + runDir + ": " + e, e);
        }
        return new Attempt(runDir, checkpointDir, paramsFile);
    }

    private static void createOwnDirectory(String name, Path dir) throws IOException {
        try {
            Files.createDirectory(dir);
        } catch (FileAlreadyExistsException e) {
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw new TaskLaunchException(name + ": " + dir + " exists but is not a plain directory (a symbolic"
                        + " link could lead outside the run root)", null);
            }
        }
    }

    /** Where one attempt's files are. Immutable. */
    public static final class Attempt {

        private final Path runDir;
        private final Path checkpointDir;
        private final Path parametersFile;

        Attempt(Path runDir, Path checkpointDir, Path parametersFile) {
            this.runDir = runDir;
            this.checkpointDir = checkpointDir;
            this.parametersFile = parametersFile;
        }

        /** Returns the attempt's run directory (absolute, exists). */
        public Path getRunDir() {
            return runDir;
        }

        /** Returns the task's checkpoint directory, shared by its attempts (absolute, exists). */
        public Path getCheckpointDir() {
            return checkpointDir;
        }

        /** Returns the parameter file (absolute, exists). */
        public Path getParametersFile() {
            return parametersFile;
        }

        @Override
        public String toString() {
            return "Attempt{runDir=" + runDir + '}';
        }
    }
}
