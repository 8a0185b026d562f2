package io.rlscheduler.worker.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongPredicate;

/**
 * Process groups as Linux's {@code /proc} shows them. Java cannot signal a process group, so a
 * group is killed member by member ({@link ProcessHandle#destroyForcibly}, which checks the
 * process's start time and so never hits a recycled pid), scanning again until no member is left:
 * a member that forks while being killed is caught by the next scan. Where there is no
 * {@code /proc} (not Linux) every query finds nothing.
 */
public final class ProcessGroups {

    private static final Path PROC = Path.of("/proc");

    private ProcessGroups() {
    }

    /** One process's {@code /proc/<pid>/stat} fields that matter here. */
    public static final class Stat {
        private final long pid;
        private final char state;
        private final long ppid;
        private final long pgrp;
        private final long session;

        Stat(long pid, char state, long ppid, long pgrp, long session) {
            this.pid = pid;
            this.state = state;
            this.ppid = ppid;
            this.pgrp = pgrp;
            this.session = session;
        }

        /** Returns the process id. */
        public long getPid() { return pid; }
        /** Returns the state letter: R, S, D, Z (zombie), T, ... */
        public char getState() { return state; }
        /** Returns the parent's pid. */
        public long getPpid() { return ppid; }
        /** Returns the process-group id. */
        public long getPgrp() { return pgrp; }
        /** Returns the session id. */
        public long getSession() { return session; }
        /** Returns whether the process has exited (a zombie, or dead): it holds no resources but its pid. */
        public boolean isExited() { return state == 'Z' || state == 'X' || state == 'x'; }
    }

    /** Returns whether {@code /proc} can be read. */
    public static boolean isAvailable() {
        return Files.isReadable(PROC.resolve("self/stat"));
    }

    /** Returns a process's stat, or empty if it does not exist. */
    public static Optional<Stat> stat(long pid) {
        try {
            return Optional.ofNullable(parseStat(Files.readString(PROC.resolve(Long.toString(pid)).resolve("stat"),
                    StandardCharsets.UTF_8)));
        } catch (IOException | RuntimeException e) {
            return Optional.empty();
        }
    }

    /** Returns whether a process exists and has not exited (zombies count as gone). */
    public static boolean isRunning(long pid) {
        return stat(pid).map(s -> !s.isExited()).orElse(false);
    }

    /**
     * Parses the text of {@code /proc/<pid>/stat}. The command name is in parentheses and may
     * itself hold spaces and ')', so fields are counted from the last ')'.
     *
     * @return the fields, or null if the text is not in that format
     */
    public static Stat parseStat(String text) {
        int open = text.indexOf('(');
        int close = text.lastIndexOf(')');
        if (open < 0 || close < open) {
            return null;
        }
        try {
            long pid = Long.parseLong(text.substring(0, open).trim());
            String[] rest = text.substring(close + 1).trim().split(" ");
            if (rest.length < 4 || rest[0].isEmpty()) {
                return null;
            }
            return new Stat(pid, rest[0].charAt(0), Long.parseLong(rest[1]), Long.parseLong(rest[2]),
                    Long.parseLong(rest[3]));
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /**
     * Returns the live (not exited) processes of a task: those in process group {@code pgid} or in
     * session {@code pgid}. The launcher leads both (it calls setsid), and only its descendants can
     * be in that session, so this also finds a member that moved to a group of its own with
     * setpgid; the launcher sweeps the same set. In no particular order.
     */
    public static List<Long> members(long pgid) {
        List<Long> members = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(PROC)) {
            for (Path dir : dirs) {
                String name = dir.getFileName().toString();
                if (name.isEmpty() || !Character.isDigit(name.charAt(0))) {
                    continue;
                }
                long pid;
                try {
                    pid = Long.parseLong(name);
                } catch (NumberFormatException e) {
                    continue;
                }
                stat(pid).filter(s -> (s.getPgrp() == pgid || s.getSession() == pgid) && !s.isExited()).ifPresent(s -> members.add(s.getPid()));
            }
        } catch (IOException | RuntimeException e) {
            return members;
        }
        return members;
    }

    /** Returns a process's argv, or an empty list if it is gone or unreadable. */
    public static List<String> commandLine(long pid) {
        try {
            byte[] raw = Files.readAllBytes(PROC.resolve(Long.toString(pid)).resolve("cmdline"));
            return splitNul(raw);
        } catch (IOException | RuntimeException e) {
            return Collections.emptyList();
        }
    }

    /** Returns a process's environment, or an empty map if it is gone or unreadable (another user's). */
    public static Map<String, String> environment(long pid) {
        Map<String, String> env = new HashMap<>();
        try {
            byte[] raw = Files.readAllBytes(PROC.resolve(Long.toString(pid)).resolve("environ"));
            for (String entry : splitNul(raw)) {
                int eq = entry.indexOf('=');
                if (eq > 0) {
                    env.put(entry.substring(0, eq), entry.substring(eq + 1));
                }
            }
        } catch (IOException | RuntimeException e) {
            return env;
        }
        return env;
    }

    static List<String> splitNul(byte[] raw) {
        String all = new String(raw, StandardCharsets.UTF_8);
        if (all.isEmpty()) {
            return Collections.emptyList();
        }
        if (all.endsWith("\0")) {
            all = all.substring(0, all.length() - 1);
        }
        return Arrays.asList(all.split("\0", -1));
    }

    /**
     * SIGKILLs every {@link #members member} of a task's group except {@code spare}, scanning again
     * until none is left or the time is up. Blocks for at most {@code timeoutMillis}.
     *
     * @param pgid          the group
     * @param spare         a pid to leave alive (the launcher, so it reports the script's end), or -1
     * @param timeoutMillis how long to keep trying
     * @return the number of distinct processes signalled
     */
    public static int kill(long pgid, long spare, long timeoutMillis) {
        return kill(pgid, pid -> pid != spare, timeoutMillis);
    }

    /**
     * SIGKILLs the members of a task's group that {@code target} accepts, scanning again until
     * none is left or the time is up: a member that forks meanwhile is caught by the next scan.
     * Never signals this JVM. Blocks for at most {@code timeoutMillis}.
     *
     * @return the number of distinct processes signalled
     */
    public static int kill(long pgid, LongPredicate target, long timeoutMillis) {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        long self = ProcessHandle.current().pid();
        Set<Long> signalled = new HashSet<>();
        while (true) {
            List<Long> targets = new ArrayList<>();
            for (long pid : members(pgid)) {
                if (pid != self && target.test(pid)) {
                    targets.add(pid);
                }
            }
            if (targets.isEmpty()) {
                return signalled.size();
            }
            for (long pid : targets) {
                if (ProcessHandle.of(pid).map(ProcessHandle::destroyForcibly).orElse(false)) {
                    signalled.add(pid);
                }
            }
            if (System.nanoTime() - deadline >= 0) {
                return signalled.size();
            }
            // SIGKILL is delivered at once but the process leaves the table a little later.
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }
}
