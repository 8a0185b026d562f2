package io.rlscheduler.chaos;

import io.rlscheduler.testkit.JvmProcess;
import java.util.List;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One master or worker slot of the chaos cluster: its current JVM (a new one each time it is
 * started again) and what the faults did to it. Used by the run's thread only, except
 * {@link #state()}, which any thread may read.
 */
final class ClusterProcess {

    /** Where a slot stands. */
    enum State { STARTING, UP, DOWN, FROZEN }

    /** What a slot runs. */
    enum Role { MASTER, WORKER }

    /** The line MasterMain prints when it is ready. */
    private static final Pattern READY_LINE = Pattern.compile("master (\\S+) ready at \\S+:(\\d+) \\((leader|standby)\\)");

    private final String name;
    private final Role role;
    private final int port;
    private final Function<ClusterProcess, JvmProcess> launcher;
    private final RunLog log;
    private int incarnation;
    private JvmProcess jvm;
    private volatile State state = State.DOWN;
    private String masterId = "?";

    /**
     * {@code port}: a master's RPC port (kept across restarts), 0 for a worker;
     * {@code launcher}: starts this slot's next JVM.
     */
    ClusterProcess(String name, Role role, int port, Function<ClusterProcess, JvmProcess> launcher, RunLog log) {
        this.name = name;
        this.role = role;
        this.port = port;
        this.launcher = launcher;
        this.log = log;
    }

    String name() {
        return name;
    }

    Role role() {
        return role;
    }

    int port() {
        return port;
    }

    /** Returns how many JVMs this slot has started, the current one included. */
    int incarnation() {
        return incarnation;
    }

    JvmProcess jvm() {
        return jvm;
    }

    State state() {
        return state;
    }

    /** Returns the master id the current JVM printed when it came up, or "?". */
    String masterId() {
        return masterId;
    }

    /** Starts a new JVM for this slot; it is STARTING until {@link #checkUp()} sees its ready line. */
    void start() {
        incarnation++;
        jvm = launcher.apply(this);
        state = State.STARTING;
    }

    /** SIGKILL to the JVM: DOWN until started again. */
    void kill() {
        jvm.kill();
        state = State.DOWN;
    }

    /** SIGSTOP to the JVM: FROZEN until thawed. */
    void freeze() {
        jvm.freeze();
        state = State.FROZEN;
    }

    /** SIGCONT to the JVM: UP again. */
    void thaw() {
        jvm.thaw();
        state = State.UP;
    }

    /** Looks at a starting JVM's output: UP once it printed its ready line. Returns whether it is UP. */
    boolean checkUp() {
        if (state != State.STARTING) {
            return state == State.UP;
        }
        for (String line : jvm.output()) {
            if (role == Role.MASTER) {
                Matcher x = READY_LINE.matcher(line);
                if (x.find()) {
                    masterId = x.group(1);
                    state = State.UP;
                    log.say("master %s up: %s (%s), pid %d", name, masterId, x.group(3), jvm.pid());
                    return true;
                }
            } else if (line.contains("worker " + name + " started, session")) {
                state = State.UP;
                log.say("worker %s up, pid %d", name, jvm.pid());
                return true;
            }
        }
        return false;
    }

    /** Returns the last {@code n} lines of the current JVM's output, joined. */
    String tail(int n) {
        List<String> lines = jvm.output();
        return String.join(" | ", lines.subList(Math.max(0, lines.size() - n), lines.size()));
    }
}
