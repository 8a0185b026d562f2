package io.rlscheduler.worker.internal;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;

/**
 * The launcher script shipped in the worker jar ({@value #RESOURCE}), copied out to a file because
 * python3 cannot run a class-path resource.
 */
public final class LauncherFile {

    /** The class-path resource. */
    public static final String RESOURCE = "/io/rlscheduler/worker/launcher.py";
    /** The file name it gets in the state directory. */
    public static final String FILE_NAME = "launcher.py";

    private LauncherFile() {
    }

    /** Returns the launcher's bytes from the class path. */
    public static byte[] content() throws IOException {
        try (InputStream in = LauncherFile.class.getResourceAsStream(RESOURCE)) {
            if (in == null) {
                throw new IOException("class-path resource " + RESOURCE + " is missing from the worker jar");
            }
            return in.readAllBytes();
        }
    }

    /**
     * Writes the launcher into {@code directory} unless an identical copy is already there. The
     * file is written aside and renamed into place, so a launcher starting at the same moment
     * never reads half a file.
     *
     * @return the launcher's path
     */
    public static Path extract(Path directory) throws IOException {
        byte[] content = content();
        Path target = directory.resolve(FILE_NAME);
        if (Files.isRegularFile(target) && Arrays.equals(Files.readAllBytes(target), content)) {
            return target;
        }
        Path temp = Files.createTempFile(directory, FILE_NAME + ".", ".tmp");
        try {
            Files.write(temp, content);
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            Files.deleteIfExists(temp);
        }
        return target;
    }
}
