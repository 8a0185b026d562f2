package io.rlscheduler.worker.internal;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Builds the command line that runs a script under the launcher:
 * <pre>
 * python3 -u LAUNCHER --grace SECONDS --pgid-file PGID_FILE -- python3 -u SCRIPT ARGS...
 * </pre>
 * No shell is involved: each element is one argv entry.
 */
public final class LauncherCommand {

    private LauncherCommand() {
    }

    /**
     * Returns the command.
     *
     * @param python     the python executable, for the launcher and the script
     * @param launcher   the launcher script
     * @param grace      time between TERM and KILL when the launcher stops the group
     * @param pgidFile   where the launcher records its process-group id
     * @param script     the script (resolved, real path)
     * @param scriptArgs the script's arguments
     */
    public static List<String> build(String python, Path launcher, Duration grace, Path pgidFile, Path script,
                                     List<String> scriptArgs) {
        return build(python, launcher, grace, Duration.ZERO, pgidFile, script, scriptArgs);
    }

    /**
     * Returns the command with a keepalive timeout: the launcher stops the group when no keepalive
     * byte arrives on its stdin for that long (zero: never).
     */
    public static List<String> build(String python, Path launcher, Duration grace, Duration keepaliveTimeout,
                                     Path pgidFile, Path script, List<String> scriptArgs) {
        List<String> cmd = new ArrayList<>(10 + scriptArgs.size());
        cmd.add(python);
        cmd.add("-u");
        cmd.add(launcher.toString());
        cmd.add("--grace");
        cmd.add(seconds(grace));
        cmd.add("--pgid-file");
        cmd.add(pgidFile.toString());
        if (!keepaliveTimeout.isZero()) {
            cmd.add("--keepalive-timeout");
            cmd.add(seconds(keepaliveTimeout));
        }
        cmd.add("--");
        cmd.add(python);
        cmd.add("-u");
        cmd.add(script.toString());
        cmd.addAll(scriptArgs);
        return cmd;
    }

    /** Returns a duration as decimal seconds with millisecond precision, no exponent: "10", "1.5", "0". */
    public static String seconds(Duration duration) {
        return BigDecimal.valueOf(duration.toMillis(), 3).stripTrailingZeros().toPlainString();
    }
}
