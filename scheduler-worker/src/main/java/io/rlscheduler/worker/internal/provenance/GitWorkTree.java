package io.rlscheduler.worker.internal.provenance;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Asks git where a script file stands: the commit checked out in the work tree it lies in, and
 * whether the tree differs from it. Two child processes, run in the script's directory:
 * <pre>
 *   git status --porcelain=v2 --branch --untracked-files=no    the commit (# branch.oid), and any
 *                                                              changed tracked file (read up to the first)
 *   git ls-files --error-unmatch -- SCRIPT                     whether the script itself is committed
 *                                                              (skipped when the tree is dirty already)
 * </pre>
 * with optional locks off (a status never takes the index lock a user's git may be waiting for),
 * pathspecs literal, no prompt, and the worker's own {@code GIT_*} variables removed, each bounded
 * by {@value #TIMEOUT_MILLIS} ms. A missing git, a directory outside any work tree (or one git
 * refuses, such as another user's), a tree without a commit, or git not answering in time all give
 * {@link State#NONE}: not in a work tree. Concurrent queries for the same file share one run (a
 * sweep starting many attempts of one script asks git once); nothing is kept after it, so a
 * change made between two attempts is always seen. Blocks the calling thread. Thread-safe.
 */
final class GitWorkTree {

    private static final Logger log = LoggerFactory.getLogger(GitWorkTree.class);
    /** The longest one git command may take before it is killed and the answer taken as unknown. */
    static final long TIMEOUT_MILLIS = 3_000;
    private static final String OID_LINE = "# branch.oid ";
    private static final Map<String, String> ENVIRONMENT = environment();

    /**
     * Where a file stands in git.
     *
     * @param commit the commit checked out, 40 hex digits, or null when not in a work tree with one
     * @param dirty  whether the tree differs from that commit (false when {@code commit} is null)
     */
    record State(String commit, boolean dirty) {
        /** Not in a work tree, as far as git says. */
        static final State NONE = new State(null, false);
    }

    private final String git;
    private final ConcurrentHashMap<Path, CompletableFuture<State>> inFlight = new ConcurrentHashMap<>();
    private volatile boolean gitMissing;

    /** @param git the git command: a name looked up on the PATH, or a path */
    GitWorkTree(String git) {
        this.git = git;
    }

    private static Map<String, String> environment() {
        Map<String, String> env = new HashMap<>();
        System.getenv().keySet().stream().filter(k -> k.startsWith("GIT_")).forEach(k -> env.put(k, null));
        env.put("GIT_OPTIONAL_LOCKS", "0");
        env.put("GIT_LITERAL_PATHSPECS", "1");
        env.put("GIT_TERMINAL_PROMPT", "0");
        env.put("LC_ALL", "C");
        return env;
    }

    /** Returns where {@code script} (a real path to a file) stands in git. */
    State of(Path script) {
        if (gitMissing) {
            return State.NONE;
        }
        CompletableFuture<State> mine = new CompletableFuture<>();
        CompletableFuture<State> running = inFlight.putIfAbsent(script, mine);
        if (running != null) {
            return running.join();
        }
        State state = State.NONE;
        try {
            state = query(script);
        } finally {
            inFlight.remove(script, mine);
            mine.complete(state);
        }
        return state;
    }

    private State query(Path script) {
        Path dir = script.getParent();
        ShortCommand.Result status = git(dir, line -> !line.startsWith("#"), "status", "--porcelain=v2", "--branch",
                "--untracked-files=no");
        if (!status.succeeded() && status.outcome() != ShortCommand.Outcome.STOPPED_AT_LINE) {
            return unknown(script, "status", status);
        }
        String commit = null;
        for (String line : status.lines()) {
            if (line.startsWith(OID_LINE)) {
                commit = line.substring(OID_LINE.length()).strip();
            }
        }
        if (commit == null || !commit.matches("[0-9a-f]{40,64}")) {
            return State.NONE; // "(initial)": a tree without a commit yet
        }
        if (status.outcome() == ShortCommand.Outcome.STOPPED_AT_LINE) {
            return new State(commit, true); // a changed tracked file
        }
        ShortCommand.Result tracked = git(dir, null, "ls-files", "--error-unmatch", "--",
                script.getFileName().toString());
        if (tracked.outcome() != ShortCommand.Outcome.EXITED) {
            return unknown(script, "ls-files", tracked);
        }
        return new State(commit, tracked.exitCode() != 0);
    }

    private ShortCommand.Result git(Path dir, Predicate<String> stopAt, String... args) {
        List<String> command = new ArrayList<>(args.length + 1);
        command.add(git);
        command.addAll(List.of(args));
        return ShortCommand.run(command, dir, ENVIRONMENT, TIMEOUT_MILLIS, false, stopAt);
    }

    private State unknown(Path script, String what, ShortCommand.Result result) {
        switch (result.outcome()) {
            case MISSING -> {
                gitMissing = true;
                log.info("no git on this worker ({} cannot be run): provenance records no commits", git);
            }
            case TIMED_OUT -> log.warn("git {} for {} took over {} ms: its commit is not recorded", what, script,
                    TIMEOUT_MILLIS);
            case FAILED -> log.warn("git {} for {} could not run: {}", what, script, result.lines());
            default -> log.debug("{} is not in a git work tree (git {} exited {})", script, what, result.exitCode());
        }
        return State.NONE;
    }
}
