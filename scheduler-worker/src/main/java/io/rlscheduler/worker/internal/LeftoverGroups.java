package io.rlscheduler.worker.internal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.LongPredicate;

/**
 * Kills the process group a pgid file names, if it is still there and still ours. A pgid is a pid,
 * and pids are recycled, so a group is only killed when it proves to be the launcher's:
 * <ul>
 *   <li>its leader is alive: the leader's command line must be {@code ... launcher.py ...
 *       --pgid-file <a file of that name> ...};</li>
 *   <li>its leader is gone but members remain (the launcher was killed alone): only members whose
 *       environment has the file's {@code RLS_TASK_ID} and {@code RLS_EPOCH} are killed.</li>
 * </ul>
 */
public final class LeftoverGroups {

    private static final Logger LOG = LoggerFactory.getLogger(LeftoverGroups.class);
    private static final long KILL_MILLIS = 1_000;

    private LeftoverGroups() {
    }

    /**
     * Kills the group named by a pgid file if it is ours, then deletes the file.
     *
     * @param pgidFile a file named {@code <taskId>-<epoch><suffix>} holding a pgid in decimal
     * @param suffix   the file name suffix
     * @return whether a live group was found and killed
     */
    public static boolean killIfOurs(Path pgidFile, String suffix) {
        try {
            return kill(pgidFile, suffix);
        } finally {
            try {
                Files.deleteIfExists(pgidFile);
            } catch (IOException e) {
                LOG.warn("cannot delete {}: {}", pgidFile, e.toString());
            }
        }
    }

    private static boolean kill(Path pgidFile, String suffix) {
        String fileName = pgidFile.getFileName().toString();
        long pgid;
        try {
            pgid = Long.parseLong(Files.readString(pgidFile, StandardCharsets.US_ASCII).trim());
        } catch (NoSuchFileException e) {
            return false; // its launcher just exited and removed it
        } catch (IOException | NumberFormatException e) {
            LOG.warn("ignoring unreadable pgid file {}: {}", pgidFile, e.toString());
            return false;
        }
        Optional<ProcessGroups.Stat> self = ProcessGroups.stat(ProcessHandle.current().pid());
        if (pgid <= 1 || self.map(s -> s.getPgrp() == pgid || s.getSession() == pgid).orElse(false)) {
            LOG.warn("ignoring pgid file {}: pgid {} is not a task's group", pgidFile, pgid);
            return false;
        }
        Optional<ProcessGroups.Stat> leader = ProcessGroups.stat(pgid).filter(s -> !s.isExited());
        if (leader.isPresent()) {
            List<String> argv = ProcessGroups.commandLine(pgid);
            if (leader.get().getPgrp() != pgid || !isLauncher(argv, fileName)) {
                LOG.info("pgid file {}: pid {} is no longer our launcher ({}); leaving it alone", pgidFile, pgid, argv);
                return false;
            }
            int n = ProcessGroups.kill(pgid, -1, KILL_MILLIS);
            LOG.warn("killed process group {} ({} process(es)) left by a previous worker: {}", pgid, n, pgidFile);
            return true;
        }
        List<Long> members = ProcessGroups.members(pgid);
        if (members.isEmpty()) {
            return false;
        }
        String stem = fileName.substring(0, fileName.length() - suffix.length());
        int dash = stem.lastIndexOf('-');
        if (dash <= 0) {
            LOG.warn("ignoring pgid file {}: its name is not <taskId>-<epoch>{}", pgidFile, suffix);
            return false;
        }
        String taskId = stem.substring(0, dash);
        String epoch = stem.substring(dash + 1);
        // Children forked meanwhile inherit the environment, so the rescans in kill() catch them.
        LongPredicate ours = pid -> {
            Map<String, String> env = ProcessGroups.environment(pid);
            return taskId.equals(env.get("RLS_TASK_ID")) && epoch.equals(env.get("RLS_EPOCH"));
        };
        int n = ProcessGroups.kill(pgid, ours, KILL_MILLIS);
        if (n == 0) {
            LOG.info("pgid file {}: group {} has no leader and no member of task {} epoch {}; leaving it alone",
                    pgidFile, pgid, taskId, epoch);
            return false;
        }
        LOG.warn("killed {} process(es) of leaderless group {} left by a previous worker: {}", n, pgid, pgidFile);
        return true;
    }

    /**
     * Returns whether an argv is a launcher's started with a pgid file of this name: a
     * {@code launcher.py} argument, then {@code --pgid-file} and the file, before {@code --}.
     */
    public static boolean isLauncher(List<String> argv, String pgidFileName) {
        boolean sawLauncher = false;
        for (int i = 0; i < argv.size(); i++) {
            String arg = argv.get(i);
            if (arg.equals("--")) {
                return false;
            }
            if (arg.endsWith(LauncherFile.FILE_NAME)) {
                sawLauncher = true;
            } else if (sawLauncher && arg.equals("--pgid-file") && i + 1 < argv.size()) {
                return names(argv.get(i + 1), pgidFileName);
            } else if (sawLauncher && arg.startsWith("--pgid-file=")) {
                return names(arg.substring("--pgid-file=".length()), pgidFileName);
            }
        }
        return false;
    }

    private static boolean names(String path, String fileName) {
        return path.equals(fileName) || path.endsWith("/" + fileName);
    }
}
