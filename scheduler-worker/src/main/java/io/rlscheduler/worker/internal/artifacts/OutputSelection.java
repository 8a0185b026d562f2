package io.rlscheduler.worker.internal.artifacts;

import io.rlscheduler.store.StoreKeys;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Decides which files of an attempt's run directory go to the store, and accounts for every entry
 * left out and why. Fed by a {@link FileListing#walk}; the files are taken in path order, so the
 * choice does not depend on the file system's order: the first {@code maxOutputFiles} files by
 * path, and of those, in path order, each one that still fits in {@code maxOutputBytes} (a file
 * that does not fit is left out, and a smaller one after it may still fit). Nothing beyond a
 * limit is taken. Memory is bounded by the files limit and {@link #MAX_LISTED}, however many
 * entries the directory holds. Used by one thread at a time; no I/O.
 */
final class OutputSelection implements FileListing.Visitor {

    /** The most entries left out that the manifest lists (the rest are counted): {@value}. */
    static final int MAX_LISTED = 1000;

    /** Why an entry is not in the store; {@code incomplete}: whether it makes the outputs incomplete. */
    enum Reason {
        /** A symbolic link; its target is either inside the run directory (and taken there) or not the run's. */
        SYMBOLIC_LINK(false),
        /** A fifo, socket or device: no bytes of the run's own. */
        NOT_REGULAR(false),
        /** A regular file whose path is not a valid key under the attempt's outputs prefix. */
        UNSTORABLE_NAME(true),
        /** Past the files limit. */
        OVER_FILES(true),
        /** Does not fit in the bytes limit. */
        OVER_BYTES(true),
        /** Could not be read when it was sent (removed, or replaced by something else, since the walk). */
        UNREADABLE(true);

        private final boolean incomplete;

        Reason(boolean incomplete) {
            this.incomplete = incomplete;
        }

        boolean makesIncomplete() {
            return incomplete;
        }
    }

    /** One entry left out: its path (as a message shows it) and why, in words. */
    record Left(String path, Reason reason, String why) {
        @Override
        public String toString() {
            return path + ": " + why;
        }
    }

    private final String prefix;
    private final int maxFiles;
    private final long maxBytes;
    private final TreeMap<String, FileListing.Entry> first = new TreeMap<>();
    private final TreeMap<String, Left> listed = new TreeMap<>();
    private final Map<Reason, Integer> counts = new EnumMap<>(Reason.class);
    private long bytesOver;
    private List<FileListing.Entry> taken;
    private long bytes;
    private String failure;

    /**
     * @param prefix   the attempt's outputs prefix in the store (a file's key is {@code prefix/path})
     * @param maxFiles the most files taken (maxOutputFiles)
     * @param maxBytes the most bytes taken in all (maxOutputBytes)
     */
    OutputSelection(String prefix, int maxFiles, long maxBytes) {
        this.prefix = prefix;
        this.maxFiles = maxFiles;
        this.maxBytes = maxBytes;
    }

    @Override
    public boolean file(FileListing.Entry e) {
        if (!StoreKeys.isValid(prefix + "/" + e.path())) {
            leave(FileListing.printable(e.path()), Reason.UNSTORABLE_NAME,
                    "a name too long to be stored under the attempt's outputs");
            return true;
        }
        first.put(e.path(), e);
        if (first.size() > maxFiles) {
            FileListing.Entry last = first.pollLastEntry().getValue();
            leave(last.path(), Reason.OVER_FILES, "over maxOutputFiles (" + maxFiles + ")");
        }
        return true;
    }

    @Override
    public void skipped(String path, FileListing.Skip why) {
        Reason reason = switch (why) {
            case SYMBOLIC_LINK -> Reason.SYMBOLIC_LINK;
            case NOT_REGULAR -> Reason.NOT_REGULAR;
            case UNSTORABLE_NAME -> Reason.UNSTORABLE_NAME;
        };
        leave(path, reason, why.text());
    }

    /** The run directory could not be walked: what was found so far is still taken, and the outputs are incomplete. */
    void failed(String message) {
        failure = "the run directory could not be read: " + message;
    }

    /**
     * Ends the walk: applies the bytes limit in path order and returns the files to send, in path
     * order. Called once, after the walk.
     */
    List<FileListing.Entry> select() {
        List<FileListing.Entry> out = new ArrayList<>(first.size());
        for (FileListing.Entry e : first.values()) {
            if (bytes + e.size() > maxBytes) {
                bytesOver += e.size();
                leave(e.path(), Reason.OVER_BYTES, e.size() + " bytes, over maxOutputBytes (" + maxBytes + " bytes)");
            } else {
                bytes += e.size();
                out.add(e);
            }
        }
        first.clear();
        taken = List.copyOf(out);
        return taken;
    }

    /** A file taken could not be read when it was sent: it is left out. */
    void unreadable(FileListing.Entry e, String message) {
        bytes -= e.size();
        leave(e.path(), Reason.UNREADABLE, "could not be read: " + message);
    }

    /** Returns the files taken, in path order (after {@link #select()}). */
    List<FileListing.Entry> taken() {
        return taken;
    }

    /** Returns the total size of the files taken, less those found unreadable. */
    long bytes() {
        return bytes;
    }

    /** Returns whether every regular file of the run directory is taken. */
    boolean isComplete() {
        if (failure != null) {
            return false;
        }
        for (Reason r : counts.keySet()) {
            if (r.makesIncomplete()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Returns why the outputs are incomplete, each limit named with its value and each kind of
     * file left out counted; the empty string when they are complete.
     */
    String error() {
        List<String> parts = new ArrayList<>();
        if (failure != null) {
            parts.add(failure);
        }
        int n = count(Reason.OVER_FILES);
        if (n > 0) {
            parts.add("more files than maxOutputFiles (" + maxFiles + "): " + files(n) + " not stored");
        }
        n = count(Reason.OVER_BYTES);
        if (n > 0) {
            parts.add(files(n) + " of " + bytesOver + " bytes over maxOutputBytes (" + maxBytes + " bytes) not stored");
        }
        n = count(Reason.UNSTORABLE_NAME);
        if (n > 0) {
            parts.add(files(n) + " with a name that cannot be stored (control characters, a backslash, too long) not stored");
        }
        n = count(Reason.UNREADABLE);
        if (n > 0) {
            parts.add(files(n) + " that could not be read not stored");
        }
        return String.join("; ", parts);
    }

    /** Returns the entries left out, in path order: the first {@link #MAX_LISTED} of them. */
    List<Left> left() {
        return List.copyOf(listed.values());
    }

    /** Returns how many entries were left out in all. */
    int leftCount() {
        int n = 0;
        for (int c : counts.values()) {
            n += c;
        }
        return n;
    }

    private int count(Reason r) {
        return counts.getOrDefault(r, 0);
    }

    private void leave(String path, Reason reason, String why) {
        counts.merge(reason, 1, Integer::sum);
        listed.put(path, new Left(path, reason, why));
        if (listed.size() > MAX_LISTED) {
            listed.pollLastEntry();
        }
    }

    private static String files(int n) {
        return n == 1 ? "1 file" : n + " files";
    }
}
