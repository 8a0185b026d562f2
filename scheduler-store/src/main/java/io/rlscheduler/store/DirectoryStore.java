package io.rlscheduler.store;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * An {@link ArtifactStore} in a directory ({@code file:} URIs): a local disk for one machine (the
 * demo's default, beside the logs), or on a lab a mount every machine sees (NFS). A key is a path
 * below the root, one directory per segment.
 *
 * <p>Each object is written to a file of its own in the root's {@value #INCOMING} directory, forced
 * to disk (unless {@code fsync} is off), then moved onto its key's path in one atomic rename and
 * its directory forced: a reader sees all of an object or none of it, after a crash too. Nothing is
 * read or written through a symbolic link below the root: a source file that is a link is refused,
 * and a key's directories must be plain directories. Thread-safe.
 */
public final class DirectoryStore implements ArtifactStore {

    /** The directory, in the root, where objects are written before they are moved onto their keys: {@value}. */
    public static final String INCOMING = ".incoming";

    private static final int BUFFER = 1 << 20;
    private static final ThreadLocal<ByteBuffer> BUFFERS = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(BUFFER));

    private final Path root;
    private final Path incoming;
    private final boolean fsync;

    /**
     * Opens (creating it if needed) a store in {@code root}, forcing each object to disk.
     *
     * @throws StoreUnavailableException if the directory cannot be created
     */
    public DirectoryStore(Path root) {
        this(root, true);
    }

    /**
     * Opens (creating it if needed) a store in {@code root}.
     *
     * @param root  the directory; made absolute
     * @param fsync whether each object is forced to disk before it becomes visible (on: a
     *              checkpoint committed survives the machine's crash; off only for scratch stores)
     * @throws StoreUnavailableException if the directory cannot be created
     */
    public DirectoryStore(Path root, boolean fsync) {
        this.root = Objects.requireNonNull(root, "root").toAbsolutePath().normalize();
        this.incoming = this.root.resolve(INCOMING);
        this.fsync = fsync;
        try {
            Files.createDirectories(incoming);
        } catch (IOException e) {
            throw new StoreUnavailableException("cannot create the artifact store directory " + incoming + ": " + e, e);
        }
    }

    /** Returns the store's directory (absolute). */
    public Path getRoot() {
        return root;
    }

    @Override
    public URI getUri() {
        return root.toUri();
    }

    /** Returns the file of a key (the key checked first). */
    private Path file(String key) {
        StoreKeys.check(key);
        return root.resolve(key);
    }

    @Override
    public StoredObject put(String key, Path source) {
        Path target = file(key);
        try (FileChannel in = FileChannel.open(source, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            if (!Files.isRegularFile(source, LinkOption.NOFOLLOW_LINKS)) {
                throw new UncheckedIOException(new IOException(source + " is not a regular file"));
            }
            return write(key, target, in, null);
        } catch (SourceReadFailure e) {
            throw new UncheckedIOException("cannot read " + source + " to store it as " + key, (IOException) e.getCause());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + source + " to store it as " + key, e);
        }
    }

    @Override
    public StoredObject put(String key, byte[] bytes) {
        Objects.requireNonNull(bytes, "bytes");
        try {
            return write(key, file(key), null, bytes);
        } catch (SourceReadFailure e) {
            throw new IllegalStateException("no source is read when bytes are stored", e);
        }
    }

    /**
     * Writes the source channel (or the bytes) to a new file in incoming, then moves it onto
     * target. A failure reading the source is thrown as a SourceReadFailure; every other one is
     * the store's.
     */
    private StoredObject write(String key, Path target, FileChannel in, byte[] bytes) throws SourceReadFailure {
        MessageDigest digest = sha256();
        Path part = incoming.resolve(UUID.randomUUID() + ".part");
        long size;
        try {
            try (FileChannel out = FileChannel.open(part, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                if (bytes != null) {
                    digest.update(bytes);
                    writeFully(out, ByteBuffer.wrap(bytes));
                    size = bytes.length;
                } else {
                    size = copy(in, out, digest);
                }
                if (fsync) {
                    out.force(true);
                }
            }
            Path dir = target.getParent();
            makeDirectories(key, dir);
            Files.move(part, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            part = null;
            if (fsync) {
                forceDirectory(dir);
            }
        } catch (SourceReadFailure e) {
            throw e;
        } catch (IOException e) {
            throw unavailable("cannot store " + key, e);
        } finally {
            deleteQuietly(part);
        }
        return new StoredObject(key, size, HexFormat.of().formatHex(digest.digest()), null);
    }

    /** A failure reading the source of a copy, told apart from one writing its target. */
    private static final class SourceReadFailure extends IOException {
        private static final long serialVersionUID = 1L;

        SourceReadFailure(IOException cause) {
            super(cause);
        }
    }

    /** Copies in to out, updating the digest; a failure reading in is a SourceReadFailure. */
    private static long copy(FileChannel in, FileChannel out, MessageDigest digest) throws IOException {
        ByteBuffer buffer = BUFFERS.get();
        long size = 0;
        while (true) {
            buffer.clear();
            int n;
            try {
                n = in.read(buffer);
            } catch (IOException e) {
                throw new SourceReadFailure(e);
            }
            if (n < 0) {
                return size;
            }
            buffer.flip();
            digest.update(buffer);
            buffer.flip();
            writeFully(out, buffer);
            size += n;
        }
    }

    private static void deleteQuietly(Path part) {
        if (part == null) {
            return;
        }
        try {
            Files.deleteIfExists(part);
        } catch (IOException ignored) {
            // its directory is gone or unwritable: the part file went with it or cannot be helped
        }
    }

    private static void writeFully(FileChannel out, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            out.write(buffer);
        }
    }

    /** Creates a key's directories below the root, refusing any that is not a plain directory (a link). */
    private void makeDirectories(String key, Path dir) throws IOException {
        Path at = root;
        for (Path segment : root.relativize(dir)) {
            at = at.resolve(segment);
            try {
                Files.createDirectory(at);
            } catch (java.nio.file.FileAlreadyExistsException e) {
                if (!Files.isDirectory(at, LinkOption.NOFOLLOW_LINKS)) {
                    throw new NotDirectoryException(at + " (in the path of " + key + ") is not a plain directory");
                }
            }
        }
    }

    private static void forceDirectory(Path dir) throws IOException {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException e) {
            // Some file systems cannot open a directory for reading; the rename is then as durable as they make it.
            if (!(e instanceof java.nio.file.AccessDeniedException)) {
                throw e;
            }
        }
    }

    @Override
    public StoredObject get(String key, Path target) {
        Path source = file(key);
        Path part = target.toAbsolutePath().resolveSibling("." + target.getFileName() + "." + UUID.randomUUID() + ".part");
        MessageDigest digest = sha256();
        long size;
        try (FileChannel in = openObject(key, source)) {
            try (FileChannel out = FileChannel.open(part, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                size = copy(in, out, digest);
            }
            Files.move(part, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            part = null;
        } catch (SourceReadFailure e) {
            throw unavailable("cannot read " + key, e.getCause());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + target, e);
        } finally {
            deleteQuietly(part);
        }
        return new StoredObject(key, size, HexFormat.of().formatHex(digest.digest()), null);
    }

    private FileChannel openObject(String key, Path source) {
        try {
            return FileChannel.open(source, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            throw new ArtifactNotFoundException(key);
        } catch (IOException e) {
            throw unavailable("cannot read " + key, e);
        }
    }

    @Override
    public InputStream open(String key) {
        Path source = file(key);
        try {
            return Files.newInputStream(source, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            throw new ArtifactNotFoundException(key);
        } catch (IOException e) {
            throw unavailable("cannot read " + key, e);
        }
    }

    @Override
    public Optional<StoredObject> stat(String key) {
        Path source = file(key);
        try {
            BasicFileAttributes a = Files.readAttributes(source, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return a.isRegularFile() ? Optional.of(new StoredObject(key, a.size(), null, a.lastModifiedTime().toInstant()))
                    : Optional.empty();
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw unavailable("cannot read " + key, e);
        }
    }

    @Override
    public List<StoredObject> list(String prefix) {
        Path dir = prefix.isEmpty() ? root : file(prefix);
        List<StoredObject> out = new ArrayList<>();
        if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
            return out;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult preVisitDirectory(Path d, BasicFileAttributes attrs) {
                    return d.equals(incoming) ? FileVisitResult.SKIP_SUBTREE : FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFile(Path f, BasicFileAttributes attrs) {
                    if (attrs.isRegularFile()) {
                        String key = root.relativize(f).toString().replace(f.getFileSystem().getSeparator(), "/");
                        if (StoreKeys.isValid(key)) {
                            out.add(new StoredObject(key, attrs.size(), null, attrs.lastModifiedTime().toInstant()));
                        }
                    }
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path f, IOException e) throws IOException {
                    if (e instanceof NoSuchFileException) {
                        return FileVisitResult.CONTINUE; // deleted while listed
                    }
                    throw e;
                }
            });
        } catch (NoSuchFileException e) {
            return out;
        } catch (IOException e) {
            throw unavailable("cannot list " + prefix, e);
        }
        out.sort(Comparator.comparing(StoredObject::getKey));
        return out;
    }

    @Override
    public void delete(String key) {
        Path f = file(key);
        try {
            if (Files.isDirectory(f, LinkOption.NOFOLLOW_LINKS)) {
                return; // a prefix, not an object
            }
            Files.deleteIfExists(f);
            // Empty directories left behind are removed up to the root, so a task's prefix disappears with its last object.
            for (Path d = f.getParent(); d != null && !d.equals(root) && d.startsWith(root); d = d.getParent()) {
                try {
                    Files.delete(d);
                } catch (DirectoryNotEmptyException | NoSuchFileException e) {
                    break;
                }
            }
        } catch (IOException e) {
            throw unavailable("cannot delete " + key, e);
        }
    }

    @Override
    public void close() {
        // nothing held between calls
    }

    private StoreUnavailableException unavailable(String what, Throwable e) {
        return new StoreUnavailableException(what + " in the artifact store " + root + ": " + e, e);
    }

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    @Override
    public String toString() {
        return "DirectoryStore[" + root + "]";
    }
}
