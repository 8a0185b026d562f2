package io.rlscheduler.worker.internal.artifacts;

import io.rlscheduler.store.StoreKeys;
import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The files under a directory that may leave the machine, found without ever leaving it: symbolic
 * links are neither followed nor taken (a link to {@code /etc} is skipped and said so), nothing
 * but regular files is taken, names that cannot be store keys are skipped and said so, and
 * hidden entries (a leading dot: the temporary files of atomic writes) are left out. Limits on
 * the number of files and bytes stop the walk with a clear error instead of sending a disk.
 */
public final class FileListing {

    /** One file found: its path relative to the walked directory ('/'-separated), where it is, its size and time. */
    public record Entry(String path, Path file, long size, long modifiedMillis) {
    }

    /** What a walk found: the files in path order, and what it skipped with why. */
    public record Result(List<Entry> files, List<String> skipped, long bytes) {
    }

    /** The walk went past a limit. */
    public static final class LimitExceeded extends Exception {
        private static final long serialVersionUID = 1L;

        LimitExceeded(String message) {
            super(message);
        }
    }

    private FileListing() {
    }

    /** Why an entry was skipped. */
    public enum Skip {
        /** A symbolic link: neither followed nor taken. */
        SYMBOLIC_LINK("a symbolic link, not followed"),
        /** A fifo, socket, device or other entry that is not a regular file or directory. */
        NOT_REGULAR("not a regular file"),
        /** A path that is not a valid store key. */
        UNSTORABLE_NAME("a name that cannot be stored (control characters, a backslash, too long)");

        private final String text;

        Skip(String text) {
            this.text = text;
        }

        /** Returns the reason as a listing says it. */
        public String text() {
            return text;
        }
    }

    /** What a {@link #walk} tells as it goes. */
    public interface Visitor {
        /** A file that may leave the machine; returns whether the walk goes on. */
        boolean file(Entry entry);

        /**
         * An entry skipped, with its path relative to the root (control characters written as
         * {@code \xNN} for {@link Skip#UNSTORABLE_NAME}).
         */
        void skipped(String path, Skip why);
    }

    /**
     * Lists the files under {@code base} (a directory, or one regular file), with paths relative
     * to {@code root}.
     *
     * @param root     the directory paths are relative to; {@code base} must lie inside it
     * @param base     where to walk
     * @param maxFiles the most files
     * @param maxBytes the most bytes in all
     * @throws LimitExceeded if there are more
     * @throws IOException   if the directory cannot be read
     */
    public static Result list(Path root, Path base, int maxFiles, long maxBytes) throws IOException, LimitExceeded {
        List<Entry> files = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        long[] bytes = {0};
        LimitExceeded[] over = {null};
        walk(root, base, new Visitor() {
            @Override
            public boolean file(Entry e) {
                if (files.size() >= maxFiles) {
                    over[0] = new LimitExceeded("more than " + maxFiles + " files");
                    return false;
                }
                bytes[0] += e.size();
                if (bytes[0] > maxBytes) {
                    over[0] = new LimitExceeded("more than " + maxBytes + " bytes (at " + e.path() + ")");
                    return false;
                }
                files.add(e);
                return true;
            }

            @Override
            public void skipped(String path, Skip why) {
                skipped.add(path + ": " + why.text());
            }
        });
        if (over[0] != null) {
            throw over[0];
        }
        files.sort(Comparator.comparing(Entry::path));
        return new Result(List.copyOf(files), List.copyOf(skipped), bytes[0]);
    }

    /**
     * Walks the entries under {@code base} (a directory, or one regular file) in the file system's
     * order, telling {@code visitor} each file that may leave the machine and each entry skipped,
     * with paths relative to {@code root}; hidden entries are left out unsaid. Nothing when
     * {@code base} does not exist.
     *
     * @param root the directory paths are relative to; {@code base} must lie inside it
     * @throws IOException if the directory cannot be read
     */
    public static void walk(Path root, Path base, Visitor visitor) throws IOException {
        Path r = root.toAbsolutePath().normalize();
        Path b = base.toAbsolutePath().normalize();
        if (!b.startsWith(r)) {
            throw new IOException(base + " is not inside " + root);
        }
        if (!Files.exists(b, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Files.walkFileTree(b, new SimpleFileVisitor<>() {
            @Override
            public FileVisitResult preVisitDirectory(Path dir, BasicFileAttributes attrs) {
                if (!dir.equals(b) && hidden(dir)) {
                    return FileVisitResult.SKIP_SUBTREE;
                }
                return FileVisitResult.CONTINUE;
            }

            @Override
            public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) {
                if (hidden(file) && !file.equals(b)) {
                    return FileVisitResult.CONTINUE;
                }
                String rel = r.relativize(file).toString().replace(file.getFileSystem().getSeparator(), "/");
                if (attrs.isSymbolicLink()) {
                    visitor.skipped(rel, Skip.SYMBOLIC_LINK);
                    return FileVisitResult.CONTINUE;
                }
                if (!attrs.isRegularFile()) {
                    visitor.skipped(rel, Skip.NOT_REGULAR);
                    return FileVisitResult.CONTINUE;
                }
                if (!StoreKeys.isValid(rel)) {
                    visitor.skipped(printable(rel), Skip.UNSTORABLE_NAME);
                    return FileVisitResult.CONTINUE;
                }
                return visitor.file(new Entry(rel, file, attrs.size(), attrs.lastModifiedTime().toMillis()))
                        ? FileVisitResult.CONTINUE : FileVisitResult.TERMINATE;
            }

            @Override
            public FileVisitResult visitFileFailed(Path file, IOException e) throws IOException {
                if (e instanceof NoSuchFileException) {
                    return FileVisitResult.CONTINUE; // removed while walked
                }
                throw e;
            }
        });
    }

    private static boolean hidden(Path p) {
        Path name = p.getFileName();
        return name != null && name.toString().startsWith(".");
    }

    /** Returns {@code s} as a message can show it: control characters written as {@code \xNN}, at most 200 characters. */
    static String printable(String s) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length() && b.length() < 200; i++) {
            char c = s.charAt(i);
            b.append(c < 0x20 || c == 0x7f ? String.format("\\x%02x", (int) c) : String.valueOf(c));
        }
        return b.toString();
    }
}
