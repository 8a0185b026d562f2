package io.rlscheduler.worker;

import io.rlscheduler.core.TaskIds;
import io.rlscheduler.worker.internal.TaskParameters;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SeekableByteChannel;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Lays out the directories of task attempts under a run root:
 * <pre>
 * ROOT/TASK_ID/attempt-N/             one per attempt: the script's working directory
 * ROOT/TASK_ID/attempt-N/params.json  the parameters as a JSON object, in submission order
 * ROOT/TASK_ID/checkpoints/           shared by every attempt, so a retry resumes
 * </pre>
 * Thread-safe; preparing the same attempt twice is harmless. Nothing is ever created through a
 * symbolic link: each directory is made one level at a time and must be a plain directory, and
 * the parameter file is never opened through a link. In a run directory this call has just
 * created, the parameter file is written directly (nothing else can have it open yet: the
 * attempt starts only once this call returns); in a run directory that already existed, the file
 * is written to a temporary file and moved over the old one atomically, so it is never seen half
 * written. The parameter file is readable and writable by its owner only, either way.
 *
 * <p>Cost per attempt, as it lies on every task's path to its start: three {@code mkdir}s and
 * one exclusive create, write and close of the parameter file. The root is created once (and
 * again should it disappear).
 */
public final class RunDirectories {

    /** The parameter file's name in a run directory: {@value}. */
    public static final String PARAMS_FILE = "params.json";
    /** The checkpoint directory's name in a task's directory: {@value}. */
    public static final String CHECKPOINTS = "checkpoints";
    /** Prefix of a run directory's name, followed by the attempt number. */
    public static final String ATTEMPT_PREFIX = "attempt-";

    private static final Set<OpenOption> NEW_FILE = Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS);
    /** rw------- where the file system has POSIX permissions: what {@link Files#createTempFile} gives. */
    private static final FileAttribute<?>[] OWNER_ONLY = FileSystems.getDefault().supportedFileAttributeViews()
            .contains("posix") ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(
                    EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE))}
            : new FileAttribute<?>[0];

    private final Path root;
    /** Whether the root is known to exist; cleared when it was found missing. */
    private volatile boolean rootCreated;

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
        return layout(taskId, attempt, parameters, true);
    }

    /**
     * Returns where an attempt's directories and parameter file would be, checked as
     * {@link #prepare} checks them, without creating anything (for executors that use none of them,
     * see {@link TaskExecutor#usesRunDirectories()}).
     *
     * @param taskId  a valid task id
     * @param attempt the attempt number, 1 or more
     * @return where things would be
     * @throws TaskLaunchException if the id is invalid or leads outside the root
     */
    public Attempt locate(String taskId, int attempt) throws TaskLaunchException {
        return layout(taskId, attempt, Map.of(), false);
    }

    private Attempt layout(String taskId, int attempt, Map<String, Object> parameters, boolean create)
            throws TaskLaunchException {
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
        Path paramsFile = runDir.resolve(PARAMS_FILE);
        if (!create) {
            return new Attempt(runDir, checkpointDir, paramsFile);
        }
        byte[] json;
        try {
            json = TaskParameters.toJson(parameters);
        } catch (IllegalArgumentException e) {
            throw new TaskLaunchException(name + ": " + e.getMessage(), e);
        }
        try {
            // Created one level at a time, refusing symbolic links, so nothing is ever created
            // through a link that leads out of the root.
            createTaskDirectory(name, taskDir);
            boolean freshRunDir = createOwnDirectory(name, runDir);
            createOwnDirectory(name, checkpointDir);
            if (!freshRunDir || !writeNew(paramsFile, json)) {
                replace(runDir, paramsFile, json);
            }
        } catch (IOException e) {
            throw new TaskLaunchException(name + ": cannot prepare " + runDir + ": " + e, e);
        }
        return new Attempt(runDir, checkpointDir, paramsFile);
    }

    /** Creates the task's directory, and the root first if it is not known to exist. */
    private void createTaskDirectory(String name, Path taskDir) throws IOException {
        if (!rootCreated) {
            Files.createDirectories(root);
            rootCreated = true;
        }
        try {
            createOwnDirectory(name, taskDir);
        } catch (NoSuchFileException rootGone) {
            // The root was removed since it was created here: make it again, once.
            rootCreated = false;
            Files.createDirectories(root);
            rootCreated = true;
            createOwnDirectory(name, taskDir);
        }
    }

    /**
     * Writes the parameter file in a run directory this call has just created. Exclusive create,
     * never through a link.
     *
     * @return false if a file is there already (another call prepared the same attempt at the
     *         same time): it must then be replaced
     */
    private static boolean writeNew(Path paramsFile, byte[] json) throws IOException {
        SeekableByteChannel channel;
        try {
            channel = Files.newByteChannel(paramsFile, NEW_FILE, OWNER_ONLY);
        } catch (FileAlreadyExistsException e) {
            return false;
        }
        boolean written = false;
        try (channel) {
            ByteBuffer buffer = ByteBuffer.wrap(json);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            written = true;
        } finally {
            if (!written) {
                // Not left half written: the attempt fails to start, and a later preparation
                // of it writes the file afresh.
                Files.deleteIfExists(paramsFile);
            }
        }
        return true;
    }

    /** Replaces the parameter file atomically: a temporary file in the same directory, then a rename. */
    private static void replace(Path runDir, Path paramsFile, byte[] json) throws IOException {
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
    }

    /**
     * Creates a directory whose parent exists, or accepts a plain directory already there.
     *
     * @return whether this call created it
     * @throws TaskLaunchException if something else is there (a symbolic link, a file)
     */
    private static boolean createOwnDirectory(String name, Path dir) throws IOException {
        try {
            Files.createDirectory(dir);
            return true;
        } catch (FileAlreadyExistsException e) {
            if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
                throw new TaskLaunchException(name + ": " + dir + " exists but is not a plain directory (a symbolic"
                        + " link could lead outside the run root)", null);
            }
            return false;
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

        /** Returns the attempt's run directory (absolute; exists after {@link RunDirectories#prepare}, not after {@link RunDirectories#locate}). */
        public Path getRunDir() {
            return runDir;
        }

        /** Returns the task's checkpoint directory, shared by its attempts (absolute; exists after {@link RunDirectories#prepare}). */
        public Path getCheckpointDir() {
            return checkpointDir;
        }

        /** Returns the parameter file (absolute; exists after {@link RunDirectories#prepare}). */
        public Path getParametersFile() {
            return parametersFile;
        }

        @Override
        public String toString() {
            return "Attempt{runDir=" + runDir + '}';
        }
    }
}
