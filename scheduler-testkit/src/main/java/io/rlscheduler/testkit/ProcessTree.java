package io.rlscheduler.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Processes as Linux's {@code /proc} shows them, for tests that check what a crash or a kill left
 * behind.
 *
 * <p>Zombies count as dead here: a process that has exited but whose parent has not collected its
 * status stays in {@code /proc} in state {@code Z}. In a container whose PID 1 does not reap
 * orphans that can last until the container ends, and {@link ProcessHandle#isAlive()} reports
 * such a zombie as alive.
 *
 * <p>Linux only: where there is no {@code /proc} (macOS, Windows) {@link #isAvailable()} is false,
 * {@link #descendants(long)} finds nothing, {@link #state(long)} is empty and {@link #isAlive(long)}
 * falls back to {@link ProcessHandle#isAlive()}. Every method reads {@code /proc} afresh, so the
 * answers may be stale as soon as they return; a scan of all processes takes about a millisecond
 * per few hundred processes. Thread-safe: there is no state.
 */
public final class ProcessTree {

    private static final Path PROC = Path.of("/proc");

    private ProcessTree() {
    }

    /** Returns whether {@code /proc} can be read, i.e. whether the other methods see anything. */
    public static boolean isAvailable() {
        return Files.isReadable(PROC.resolve("self/stat"));
    }

    /**
     * Returns the state letter from {@code /proc/<pid>/stat}: {@code R} running, {@code S}
     * sleeping, {@code D} disk sleep, {@code T} stopped (SIGSTOP), {@code t} traced, {@code Z}
     * zombie, {@code X} dead, ... Empty when there is no such process or no {@code /proc}.
     */
    public static Optional<Character> state(long pid) {
        return stat(pid).map(Stat::state);
    }

    /**
     * Returns whether the process exists and has not exited: true for a running, sleeping or
     * stopped process, false for a zombie or a pid with no process. Without {@code /proc}, returns
     * {@link ProcessHandle#isAlive()}, which counts zombies as alive.
     */
    public static boolean isAlive(long pid) {
        if (!isAvailable()) {
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        }
        return stat(pid).map(s -> !s.exited()).orElse(false);
    }

    /**
     * Returns the pids of all live descendants of {@code pid}: its children, their children, and
     * so on, parents before their children, zombies left out (a zombie's children, which have been
     * handed to a reaper, are no longer its descendants anyway). Empty if {@code pid} has none or
     * does not exist, or without {@code /proc}.
     *
     * <p>A descendant whose parent has died is reparented (to PID 1 or a subreaper) and so is no
     * longer found; take the list before killing a parent whose children must be found later.
     */
    public static List<Long> descendants(long pid) {
        Map<Long, List<Long>> children = new HashMap<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(PROC)) {
            for (Path dir : dirs) {
                long child = parsePid(dir.getFileName().toString());
                if (child < 0) {
                    continue;
                }
                stat(child).filter(s -> !s.exited())
                        .ifPresent(s -> children.computeIfAbsent(s.ppid(), k -> new ArrayList<>())
                                .add(s.pid()));
            }
        } catch (IOException | RuntimeException e) {
            return List.of();
        }
        List<Long> result = new ArrayList<>();
        ArrayDeque<Long> queue = new ArrayDeque<>();
        queue.add(pid);
        while (!queue.isEmpty()) {
            for (long child : children.getOrDefault(queue.poll(), List.of())) {
                if (child != pid && !result.contains(child)) {
                    result.add(child);
                    queue.add(child);
                }
            }
        }
        return result;
    }

    private static long parsePid(String name) {
        if (name.isEmpty() || !Character.isDigit(name.charAt(0))) {
            return -1;
        }
        try {
            return Long.parseLong(name);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static Optional<Stat> stat(long pid) {
        try {
            String text = Files.readString(PROC.resolve(Long.toString(pid)).resolve("stat"),
                    StandardCharsets.UTF_8);
            return Optional.ofNullable(Stat.parse(text));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** The fields of {@code /proc/<pid>/stat} used here. */
    static final class Stat {
        private final long pid;
        private final char state;
        private final long ppid;

        private Stat(long pid, char state, long ppid) {
            this.pid = pid;
            this.state = state;
            this.ppid = ppid;
        }

        /**
         * Parses {@code /proc/<pid>/stat}. The command name is in parentheses and may itself hold
         * spaces and ')', so the fields are counted from the last ')'.
         *
         * @return the fields, or null if the text is not in that format
         */
        static Stat parse(String text) {
            int open = text.indexOf('(');
            int close = text.lastIndexOf(')');
            if (open < 0 || close < open) {
                return null;
            }
            try {
                long pid = Long.parseLong(text.substring(0, open).trim());
                String[] rest = text.substring(close + 1).trim().split(" ");
                if (rest.length < 2 || rest[0].isEmpty()) {
                    return null;
                }
                return new Stat(pid, rest[0].charAt(0), Long.parseLong(rest[1]));
            } catch (NumberFormatException e) {
                return null;
            }
        }

        long pid() {
            return pid;
        }

        char state() {
            return state;
        }

        long ppid() {
            return ppid;
        }

        boolean exited() {
            return state == 'Z' || state == 'X' || state == 'x';
        }
    }
}
