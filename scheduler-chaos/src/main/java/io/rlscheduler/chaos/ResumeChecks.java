package io.rlscheduler.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.TaskTransition;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Checks that every resumed attempt of a task started from the right checkpoint, and that its
 * script's own count went on from there. Pure: it reads only what it is given.
 *
 * <p>The attempts are the task history's claims, in order: the k-th move into ASSIGNED is
 * attempt k, of the epoch it names, on the worker it names. Two rules, per task:
 * <ol>
 *   <li><b>Fenced commits.</b> Every checkpoint seen committed ({@link CheckpointLedger}) was
 *       committed, by Redis's clock (its entry's {@code at}), while the attempt of its epoch held
 *       the task: at or after that attempt's claim and, when the attempt lost the task (its
 *       epoch's move back to QUEUED), at or before that move. A checkpoint that is not, for instance
 *       one a frozen worker sent after it lost its task, would be a stale commit accepted.</li>
 *   <li><b>Resume from the newest before the failure.</b> The checkpoint attempt k must resume
 *       from is the newest (by epoch, then number) of those whose epoch is older than attempt k's.
 *       By rule 1 these are exactly the ones committed before the failure that ended attempt
 *       k-1, that is before it lost the task, and so before attempt k's claim; a frozen
 *       worker's commits after it lost its task are refused, so the newest entry of an older
 *       epoch is the one. What attempt k resumed from is its worker's note in Redis
 *       ({@code {ns}:restores:<task>}), or where the note is missing the line
 *       "rl-scheduler: resuming from checkpoint ..." in its block of the task's log; and its
 *       script's count is train.py's "RESUMED from episode N" in what the attempt printed (0
 *       when absent), which must equal the episode that checkpoint's {@code checkpoint.json}
 *       holds. An attempt with nothing committed before its claim is not checked: its worker
 *       leaves the checkpoint directory as its own disk has it.</li>
 * </ol>
 * An attempt that left no trace (claimed, then lost before its script started) has nothing to
 * check. A checkpoint whose content the watch could not read in time makes its resumes
 * unverified (counted, not a failure).
 */
final class ResumeChecks {

    /** The worker's line in an attempt's log block saying what it restored. */
    static final Pattern RESUMING = Pattern.compile("^rl-scheduler: resuming from checkpoint (\\S+) \\(attempt (\\d+) on ([^:]+):");
    /** The worker's line in an attempt's log block saying nothing could be restored. */
    static final String NOTHING_RESTORED = "rl-scheduler: no committed checkpoint could be restored";
    /** train.py's line when it continues from a checkpoint. */
    static final Pattern RESUMED = Pattern.compile("^RESUMED from episode (\\d+)$");
    /** chaos_task.py's line saying what the checkpoint directory held when the script started. */
    static final String RESUME_POINT = "chaos_task: resume point:";

    private static final ObjectMapper JSON = new ObjectMapper();

    /** What an attempt printed, from its run directory on the worker that ran it; empty when it has none. */
    interface Printed {
        Optional<List<String>> of(String workerId, int attempt);
    }

    /** What the checks found for one task. */
    static final class Result {
        final List<String> problems = new ArrayList<>();
        /** Attempts that had a committed checkpoint to resume from and left a trace of their start. */
        int resumed;
        /** Of those, the ones that resumed from a checkpoint another worker committed. */
        int fromAnotherWorker;
        /** Resumes whose checkpoint's content was not read in time, so the count went unchecked. */
        int unverified;
        /** Attempts after the first that started with nothing committed. */
        int nothingCommitted;
        /** Of those, the ones whose script still resumed: from a checkpoint its worker's own disk kept, never committed. */
        int fromUncommitted;
        /** The attempts that resumed, in one short line: {@code 2<w1 3<w2} (attempt, then the committing worker). */
        final StringBuilder summary = new StringBuilder();
    }

    /** One move of a task's history, as far as these checks look at it (a {@link TaskTransition}). */
    record Move(long atMillis, TaskState to, long epoch, String worker) {

        static Move of(TaskTransition t) {
            return new Move(t.getAtMillis(), t.getTo(), t.getEpoch(), t.getWorkerId());
        }
    }

    /** One claim of the task: attempt k of an epoch on a worker, and when it lost the task (null if it did not). */
    private record Claim(int attempt, long epoch, String worker, long claimedAt, Long lostAt) {
    }

    private ResumeChecks() {
    }

    /**
     * Checks one task.
     *
     * @param history its record's history
     * @param commits the checkpoints seen committed, oldest first
     * @param notes   its worker's notes of what each attempt resumed from: attempt number to JSON
     * @param log     its log file, when there is one
     * @param printed what each attempt printed
     */
    static Result check(List<Move> history, List<CheckpointLedger.Commit> commits, Map<Integer, String> notes,
                        Optional<TaskLogFile.TaskLog> log, Printed printed) {
        Result out = new Result();
        List<Claim> claims = claims(history);
        Map<Long, Claim> byEpoch = new HashMap<>();
        claims.forEach(c -> byEpoch.put(c.epoch(), c));

        for (CheckpointLedger.Commit c : commits) {
            Claim holder = byEpoch.get(c.entry().epoch());
            long at = c.entry().committedAt().toEpochMilli();
            if (holder == null) {
                out.problems.add("checkpoint " + c.entry().id() + " is of epoch " + c.entry().epoch()
                        + ", which the task's history never claimed");
            } else if (at < holder.claimedAt() || (holder.lostAt() != null && at > holder.lostAt())) {
                out.problems.add("checkpoint " + c.entry().id() + " was committed at " + time(at)
                        + " while attempt " + holder.attempt() + " (epoch " + holder.epoch() + ") did not hold the task"
                        + " (claimed at " + time(holder.claimedAt()) + (holder.lostAt() == null ? ""
                        : ", lost at " + time(holder.lostAt())) + "): a stale commit accepted");
            }
        }

        for (Claim claim : claims) {
            CheckpointLedger.Commit expected = null;
            for (CheckpointLedger.Commit c : commits) {
                if (c.entry().epoch() < claim.epoch()) {
                    expected = c; // oldest first: the last one is the newest
                }
            }
            String what = "attempt " + claim.attempt() + " (epoch " + claim.epoch() + " on " + claim.worker() + ")";
            Restored got = restored(notes.get(claim.attempt()), log, claim.epoch());
            Optional<List<String>> lines = printed.of(claim.worker(), claim.attempt());
            if (expected == null) {
                if (got != null && got.id != null) {
                    out.problems.add(what + " resumed from " + got.id + ", but no checkpoint was seen committed before"
                            + " its claim at " + time(claim.claimedAt()));
                } else if (claim.attempt() > 1 && lines.isPresent()) {
                    out.nothingCommitted++;
                    out.fromUncommitted += resumedEpisode(lines.get()) > 0 ? 1 : 0;
                }
                continue;
            }
            if (got == null && lines.isEmpty()) {
                continue; // never started: nothing was restored that anyone saw
            }
            out.resumed++;
            String expectation = expected.describe() + ", the newest committed before its claim at "
                    + time(claim.claimedAt());
            if (got != null && !expected.entry().id().equals(got.id)) {
                out.problems.add(what + " resumed from " + (got.id == null ? "nothing" : got.id) + " (" + got.source
                        + "), expected " + expectation + got.skipped);
            }
            if (lines.isPresent()) {
                int count = resumedEpisode(lines.get());
                if (!expected.contentKnown()) {
                    out.unverified++;
                } else if (count != expected.episode()) {
                    out.problems.add(what + ": its script resumed at episode " + count + " (" + resumePoint(lines.get())
                            + "), expected episode " + expected.episode() + " of " + expectation);
                }
            }
            String from = got == null || got.id == null ? null : commits.stream()
                    .filter(c -> c.entry().id().equals(got.id)).map(c -> c.entry().workerId()).findFirst().orElse(got.worker);
            if (from != null) {
                if (!from.equals(claim.worker())) {
                    out.fromAnotherWorker++;
                }
                out.summary.append(out.summary.length() == 0 ? "" : " ").append(claim.attempt()).append('<').append(from);
            }
        }
        return out;
    }

    /** The task's claims, in order, each with the moment its epoch lost the task (a move to QUEUED), if it did. */
    private static List<Claim> claims(List<Move> history) {
        List<Claim> claims = new ArrayList<>();
        for (int i = 0; i < history.size(); i++) {
            Move t = history.get(i);
            if (t.to() != TaskState.ASSIGNED) {
                continue;
            }
            Long lostAt = null;
            for (int j = i + 1; j < history.size(); j++) {
                Move u = history.get(j);
                if (u.epoch() == t.epoch() && u.to() != TaskState.RUNNING && u.to() != TaskState.ASSIGNED) {
                    lostAt = u.to().isTerminal() ? null : u.atMillis();
                    break;
                }
            }
            claims.add(new Claim(claims.size() + 1, t.epoch(), t.worker(), t.atMillis(), lostAt));
        }
        return claims;
    }

    /** What an attempt restored, by its worker's account; {@code id} null: nothing. */
    private record Restored(String id, String worker, String source, String skipped) {
    }

    /** What attempt restored: its note in Redis, else its line in the log, else null (unknown). */
    private static Restored restored(String note, Optional<TaskLogFile.TaskLog> log, long epoch) {
        if (note != null) {
            try {
                JsonNode n = JSON.readTree(note);
                String id = n.path("from").isTextual() ? n.get("from").asText() : null;
                String skipped = n.path("skipped").isEmpty() ? "" : "; skipped: " + n.get("skipped");
                return new Restored(id, null, "its note in Redis", skipped);
            } catch (IOException e) {
                return new Restored(null, null, "its note in Redis is unreadable: " + note, "");
            }
        }
        if (log.isPresent()) {
            for (TaskLogFile.AttemptBlock b : log.get().attempts()) {
                if (b.epoch != epoch) {
                    continue;
                }
                for (String line : b.lines) {
                    Matcher m = RESUMING.matcher(line);
                    if (m.find()) {
                        return new Restored(m.group(1), m.group(3), "its line in the log", "");
                    }
                    if (line.startsWith(NOTHING_RESTORED)) {
                        return new Restored(null, null, "its line in the log", "");
                    }
                }
            }
        }
        return null;
    }

    /** train.py's resumed count in what an attempt printed: the episode after "RESUMED from episode", 0 when absent. */
    static int resumedEpisode(List<String> printed) {
        for (String line : printed) {
            Matcher m = RESUMED.matcher(line);
            if (m.find()) {
                return Integer.parseInt(m.group(1));
            }
        }
        return 0;
    }

    private static String resumePoint(List<String> printed) {
        return printed.stream().filter(l -> l.startsWith(RESUME_POINT)).findFirst().orElse("no resume point printed");
    }

    private static String time(long millis) {
        return Instant.ofEpochMilli(millis).toString();
    }
}
