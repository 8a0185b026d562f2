package io.rlscheduler.chaos;

import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.TaskTransition;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The verdict of a chaos run, per task, from its record, its log file and its attempts' own marks:
 * <ul>
 *   <li><b>lost</b>: its record is missing or not SUCCEEDED when the run ends.</li>
 *   <li><b>duplicated</b>: its record's history enters SUCCEEDED more than once, or ends
 *       (enters any final state) more than once, or its log file ends more than one attempt
 *       with {@code ##RLS_END state=SUCCEEDED}.</li>
 *   <li><b>overlapping</b>: two of its attempts were running at the same time by their own
 *       marks (see {@link AttemptMarks#overlap()}).</li>
 *   <li><b>succeeded exactly once</b>: SUCCEEDED, not duplicated, not overlapping, the one
 *       success is the record's last epoch, that epoch's marks show it ran to the end
 *       ({@code exit=0}), the log file holds that attempt completely: after its
 *       {@code ##RLS_ATTEMPT} marker, exactly the lines it printed, in order (beside the lines its
 *       worker wrote, see {@link TaskLogFile#isWorkerLine}), then
 *       {@code ##RLS_END state=SUCCEEDED complete=true}; and its checkpoints and resumes pass
 *       {@link ResumeChecks}: every checkpoint committed while its attempt held the task, every
 *       resumed attempt started from the newest checkpoint committed before the failure, and its
 *       script's count went on from that checkpoint's episode.</li>
 * </ul>
 * The last line also counts the tasks that resumed from a checkpoint another worker committed
 * (restored from the store onto a worker whose own disk never held it).
 * An attempt that finished its training but whose worker was killed or frozen before the success
 * reached Redis is run again (it resumes from its final checkpoint and ends at once): that is the
 * lease's at-least-once execution, not a duplicate; it is counted and printed as "re-run after an
 * unreported finish". Prints a table of the tasks, then the problems with their evidence.
 */
final class ChaosChecks {

    private final Evidence evidence;
    private final RunLog log;

    ChaosChecks(Evidence evidence, RunLog log) {
        this.evidence = evidence;
        this.log = log;
    }

    /** What the checks found for one task. */
    private static final class Verdict {
        final List<String> issues = new ArrayList<>();
        boolean lost;
        boolean duplicated;
        boolean overlapping;
        boolean rerun;
        ResumeChecks.Result resumes;
    }

    /**
     * Checks every task, prints the table and the problems, and returns the report.
     * {@code faults}: what was injected; {@code unexpectedExits}: JVMs that exited by themselves;
     * {@code seed}: printed with the problems.
     */
    ChaosReport check(List<String> taskIds, Map<String, Integer> faults, int unexpectedExits, long seed) throws IOException {
        int succeededOnce = 0;
        int lost = 0;
        int duplicated = 0;
        int overlapping = 0;
        int reruns = 0;
        int resumedElsewhere = 0;
        int resumed = 0;
        int unverified = 0;
        int nothingCommitted = 0;
        int fromUncommitted = 0;
        List<String> problems = new ArrayList<>();
        log.printf("%n%-10s %-10s %8s %6s %-8s %-7s %-16s %s%n", "task", "state", "attempts", "losses", "worker", "verdict",
                "resumed<from", "attempts by their marks (done: trained to the end; term: stopped by a signal)");
        for (String id : taskIds) {
            Optional<TaskRecord> found = evidence.record(id);
            AttemptMarks marks = evidence.marks(id);
            Verdict v = judge(id, found, marks);
            lost += v.lost ? 1 : 0;
            duplicated += v.duplicated ? 1 : 0;
            overlapping += v.overlapping ? 1 : 0;
            reruns += v.rerun ? 1 : 0;
            if (v.resumes != null) {
                resumedElsewhere += v.resumes.fromAnotherWorker > 0 ? 1 : 0;
                resumed += v.resumes.resumed;
                unverified += v.resumes.unverified;
                nothingCommitted += v.resumes.nothingCommitted;
                fromUncommitted += v.resumes.fromUncommitted;
            }
            if (v.issues.isEmpty()) {
                succeededOnce++;
            } else {
                problems.add(id + ": " + String.join("; ", v.issues));
            }
            TaskRecord r = found.orElse(null);
            log.printf("%-10s %-10s %8s %6s %-8s %-7s %-16s %s%n", id, r == null ? "-" : r.getState(),
                    r == null ? "-" : r.getAttempt(), r == null ? "-" : r.getLeaseLosses(), r == null ? "-" : r.getWorkerId(),
                    v.issues.isEmpty() ? "ok" : "FAIL", v.resumes == null || v.resumes.summary.length() == 0 ? "-"
                            : v.resumes.summary, marks.summary());
        }
        log.printf("%n");
        log.say("faults injected: %s; processes that exited by themselves: %d", faults, unexpectedExits);
        if (reruns > 0) {
            log.say("note: %d task(s) re-ran after an unreported finish (training done, worker killed or frozen before the "
                    + "success reached Redis; the retry resumed from the final checkpoint) - at-least-once, not a duplicate",
                    reruns);
        }
        log.say("resumes: %d attempts had a committed checkpoint to resume from, each checked against the newest committed "
                + "before the failure (%d unverified: its content was evicted before it was read); %d tasks resumed from "
                + "another worker's checkpoint; %d later attempts started with nothing committed yet (%d of them resumed "
                + "from their worker's own uncommitted checkpoint, which the worker leaves in place)", resumed, unverified,
                resumedElsewhere, nothingCommitted, fromUncommitted);
        if (!problems.isEmpty()) {
            printEvidence(problems, seed);
        }
        return new ChaosReport(taskIds.size(), succeededOnce, lost, duplicated, overlapping, reruns, resumedElsewhere,
                problems);
    }

    private Verdict judge(String id, Optional<TaskRecord> found, AttemptMarks marks) throws IOException {
        Verdict v = new Verdict();
        if (found.isEmpty() || found.get().getState() != TaskState.SUCCEEDED) {
            v.lost = true;
            v.issues.add(found.isEmpty() ? "no record" : "ended " + found.get().getState() + ": "
                    + found.get().getError() + " " + found.get().getReason());
        }
        TaskRecord r = found.orElse(null);
        if (r != null) {
            List<TaskTransition> successes = r.getHistory().stream().filter(t -> t.getTo() == TaskState.SUCCEEDED).toList();
            long endings = r.getHistory().stream().filter(t -> t.getTo().isTerminal()).count();
            if (successes.size() > 1 || endings > 1) {
                v.duplicated = true;
                v.issues.add("history enters SUCCEEDED " + successes.size() + " times, a final state " + endings + " times");
            }
            if (r.getState() == TaskState.SUCCEEDED && successes.size() == 1 && successes.get(0).getEpoch() != r.getEpoch()) {
                v.issues.add("success recorded for epoch " + successes.get(0).getEpoch() + " but the record's epoch is "
                        + r.getEpoch());
            }
        }
        Optional<TaskLogFile.TaskLog> taskLog = evidence.log(id);
        if (taskLog.isPresent()) {
            long successEnds = taskLog.get().attempts().stream()
                    .filter(a -> a.end != null && a.end.getFinalState() == TaskState.SUCCEEDED).count();
            if (successEnds > 1) {
                v.duplicated = true;
                v.issues.add("log file ends " + successEnds + " attempts with state=SUCCEEDED");
            }
        }
        String overlap = marks.overlap();
        if (overlap != null) {
            v.overlapping = true;
            v.issues.add(overlap);
        }
        v.rerun = marks.completed() > 1;
        if (r != null) {
            List<ResumeChecks.Move> history = r.getHistory().stream().map(ResumeChecks.Move::of).toList();
            v.resumes = ResumeChecks.check(history, evidence.ledger().of(id), evidence.restores(id), taskLog,
                    (worker, attempt) -> evidence.printed(worker, id, attempt));
            v.issues.addAll(v.resumes.problems);
        }
        if (!v.lost && r != null) {
            AttemptMarks.Span last = marks.spans.get(r.getEpoch());
            if (last == null || !"exit=0".equals(last.how())) {
                v.issues.add("the succeeded epoch " + r.getEpoch() + " has no 'exit=0' stop mark ("
                        + (last == null ? "no marks" : last) + ")");
            }
            String logIssue = checkLog(id, r, taskLog);
            if (logIssue != null) {
                v.issues.add(logIssue);
            }
        }
        return v;
    }

    /** Compares the final attempt's block in the master's log file with what the attempt printed. */
    private String checkLog(String id, TaskRecord r, Optional<TaskLogFile.TaskLog> taskLog) throws IOException {
        if (taskLog.isEmpty()) {
            return "no log file " + evidence.workdir().taskLog(id);
        }
        Path printedFile = evidence.printedFile(r);
        if (!Files.exists(printedFile)) {
            return "no " + printedFile;
        }
        String problem = finalAttemptProblem(taskLog.get(), r.getEpoch(),
                Files.readAllLines(printedFile, StandardCharsets.UTF_8));
        return problem == null ? null : problem + " (printed: " + printedFile + ")";
    }

    /**
     * Checks the successful attempt's block of a log file against what it printed: records of
     * {@code epoch}, exactly the printed lines in order (its worker's own lines left out), an end
     * SUCCEEDED and complete, and nothing after that end. Returns the problem, or null.
     */
    static String finalAttemptProblem(TaskLogFile.TaskLog taskLog, long epoch, List<String> printed) {
        TaskLogFile.AttemptBlock block = null;
        for (TaskLogFile.AttemptBlock a : taskLog.attempts()) {
            if (a.epoch == epoch) {
                block = a;
            }
        }
        if (block == null) {
            return "log file has no line or end of epoch " + epoch;
        }
        List<String> scriptLines = block.lines.stream().filter(l -> !TaskLogFile.isWorkerLine(l)).toList();
        if (!printed.equals(scriptLines)) {
            int i = 0;
            while (i < printed.size() && i < scriptLines.size() && printed.get(i).equals(scriptLines.get(i))) {
                i++;
            }
            return "log of epoch " + epoch + " differs from what it printed at line " + (i + 1) + " (log "
                    + scriptLines.size() + " lines: " + (i < scriptLines.size() ? "'" + scriptLines.get(i) + "'" : "end")
                    + "; printed " + printed.size() + " lines: " + (i < printed.size() ? "'" + printed.get(i) + "'" : "end") + ")";
        }
        if (block.end == null || block.end.getFinalState() != TaskState.SUCCEEDED || !block.end.isComplete()) {
            return "log of epoch " + epoch + " ends with " + (block.end == null ? "no end" : TaskLogFile.describe(block.end));
        }
        if (!block.afterEnd.isEmpty()) {
            return "log of epoch " + epoch + " has " + block.afterEnd.size() + " more record(s) after its end, first: "
                    + block.afterEnd.get(0);
        }
        return null;
    }

    /** Prints each problem, then each failing task's history and marks. */
    private void printEvidence(List<String> problems, long seed) {
        Workdir w = evidence.workdir();
        log.say("PROBLEMS (seed %d; evidence: records above, %s, %s/<worker>/runs/<task>/attempt-<n>/{marks.log,printed.txt}, "
                + "the store %s, %s):", seed, w.logs(), w.workers(), w.store(), w.jvm());
        for (String p : problems) {
            log.say("  %s", p);
        }
        for (String p : problems) {
            String id = p.substring(0, p.indexOf(':'));
            evidence.record(id).ifPresent(rec -> {
                log.say("  history of %s:", id);
                for (TaskTransition t : rec.getHistory()) {
                    log.say("    %d %s -> %s epoch %d worker %s: %s", t.getAtMillis(), t.getFrom(), t.getTo(), t.getEpoch(),
                            t.getWorkerId(), t.getReason());
                }
            });
            log.say("  marks of %s: %s", id, evidence.marks(id).lines);
            log.say("  checkpoints of %s seen committed: %s", id, evidence.ledger().of(id).stream()
                    .map(c -> c.describe() + " at " + c.entry().committedAt()).toList());
            log.say("  resumes of %s noted in Redis: %s", id, evidence.restores(id));
        }
    }
}
