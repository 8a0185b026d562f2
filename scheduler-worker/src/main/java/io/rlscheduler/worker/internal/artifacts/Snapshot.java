package io.rlscheduler.worker.internal.artifacts;

import java.io.IOException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * A checkpoint's files as they were when it was marked: hard links (a copy where the file system
 * has none) in a directory of the worker's own, so the script may go on and replace or delete its
 * files while they upload. A file the script replaced (renamed over) since it printed the line is
 * taken in its newer, whole version. A script that rewrites a file in place changes the linked file too;
 * {@link #changed()} sees it by size and time, and such a checkpoint is not committed.
 *
 * @param dir   the snapshot's directory
 * @param files the files: path relative to the checkpoint directory, the snapshot's file, its size and time
 */
record Snapshot(Path dir, List<FileListing.Entry> files) {

    /** Links or copies {@code listed} into {@code dir}. */
    static Snapshot take(Path dir, FileListing.Result listed) throws IOException {
        Files.createDirectories(dir);
        List<FileListing.Entry> taken = new ArrayList<>(listed.files().size());
        try {
            for (FileListing.Entry e : listed.files()) {
                Path target = dir.resolve(e.path());
                Files.createDirectories(target.getParent());
                try {
                    Files.createLink(target, e.file());
                } catch (UnsupportedOperationException | IOException noLink) {
                    Files.copy(e.file(), target, LinkOption.NOFOLLOW_LINKS, StandardCopyOption.COPY_ATTRIBUTES);
                }
                // The link's own size and time, not the listing's: a file replaced by a rename since it
                // was listed is linked whole in its newer version; one rewritten in place from now on
                // is caught by changed().
                BasicFileAttributes a = Files.readAttributes(target, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
                taken.add(new FileListing.Entry(e.path(), target, a.size(), a.lastModifiedTime().toMillis()));
            }
        } catch (IOException e) {
            delete(dir);
            throw e;
        }
        return new Snapshot(dir, List.copyOf(taken));
    }

    /** Returns the path of the first file whose size or time differs from when it was taken, or null. */
    String changed() throws IOException {
        for (FileListing.Entry e : files) {
            BasicFileAttributes a = Files.readAttributes(e.file(), BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (a.size() != e.size() || a.lastModifiedTime().toMillis() != e.modifiedMillis()) {
                return e.path();
            }
        }
        return null;
    }

    /** Returns the total size. */
    long bytes() {
        long n = 0;
        for (FileListing.Entry e : files) {
            n += e.size();
        }
        return n;
    }

    /** Deletes the snapshot's directory (the links; the script's files are not touched). */
    void delete() {
        delete(dir);
    }

    /** A fingerprint of a listing: the paths, sizes and times, hashed. Equal listings, equal fingerprints. */
    static String fingerprint(FileListing.Result listed) {
        MessageDigest d = CheckpointRestorer.sha256();
        for (FileListing.Entry e : listed.files()) {
            d.update((e.path() + '\0' + e.size() + '\0' + e.modifiedMillis() + '\n').getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        return HexFormat.of().formatHex(d.digest());
    }

    static void delete(Path dir) {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException ignored) {
            // a snapshot left behind is removed with the worker's next snapshots of the task
        }
    }
}
