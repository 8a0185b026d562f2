package io.rlscheduler.worker.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;

/**
 * Finds a task's script inside the worker's script roots. A script is named by a relative path;
 * absolute paths, {@code ..} segments and anything that resolves (symbolic links followed) outside
 * its root are refused, so a task can only run code an operator put under a root.
 */
public final class ScriptPaths {

    private ScriptPaths() {
    }

    /**
     * Checks the spelling of a script path without touching the file system.
     *
     * @return the path, relative and normalised
     * @throws IllegalArgumentException if it is empty, absolute, has a {@code ..} segment or a NUL
     */
    public static Path checkRelative(String script) {
        if (script == null || script.isEmpty()) {
            throw new IllegalArgumentException("script path is empty");
        }
        if (script.indexOf('\0') >= 0) {
            throw new IllegalArgumentException("script path contains a NUL character");
        }
        if (script.startsWith("/")) {
            throw new IllegalArgumentException("script path must be relative to a script root, was absolute");
        }
        for (String segment : script.split("/", -1)) {
            if (segment.equals("..")) {
                throw new IllegalArgumentException("script path must not contain '..' segments");
            }
        }
        Path path;
        try {
            path = Path.of(script);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("script path is not a valid path: " + e.getReason(), e);
        }
        if (path.isAbsolute() || path.getRoot() != null) {
            throw new IllegalArgumentException("script path must be relative to a script root, was absolute");
        }
        Path normalized = path.normalize();
        if (normalized.toString().isEmpty()) {
            throw new IllegalArgumentException("script path names no file");
        }
        return normalized;
    }

    /**
     * Returns whether {@code candidate} lies inside {@code root}. Both must be real paths
     * ({@link Path#toRealPath}), so that this compares where files really are.
     */
    public static boolean isInside(Path root, Path candidate) {
        return candidate.startsWith(root) && !candidate.equals(root);
    }

    /**
     * Resolves a script against the roots in order: the first root under which it exists wins.
     *
     * @param roots  the script roots
     * @param script the script as submitted
     * @return the script's real path: inside a root, a regular file
     * @throws IllegalArgumentException if it is spelt wrong, is in no root, escapes its root through
     *                                  a symbolic link, or is not a regular file
     */
    public static Path resolve(List<Path> roots, String script) {
        Path relative = checkRelative(script);
        for (Path root : roots) {
            Path realRoot;
            try {
                realRoot = root.toRealPath();
            } catch (IOException e) {
                continue; // a root that does not exist holds no scripts
            }
            Path candidate = realRoot.resolve(relative);
            if (!Files.exists(candidate, LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            Path real;
            try {
                real = candidate.toRealPath();
            } catch (NoSuchFileException e) {
                throw new IllegalArgumentException("script is a dangling symbolic link under root " + root, e);
            } catch (IOException e) {
                throw new IllegalArgumentException("script cannot be resolved under root " + root + ": " + e, e);
            }
            if (!isInside(realRoot, real)) {
                throw new IllegalArgumentException("script resolves outside its script root " + root
                        + " (a symbolic link?)");
            }
            if (!Files.isRegularFile(real)) {
                throw new IllegalArgumentException("script is not a regular file under root " + root);
            }
            return real;
        }
        throw new IllegalArgumentException("script not found in the script roots " + roots);
    }
}
