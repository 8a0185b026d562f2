package io.rlscheduler.chaos;

import java.util.List;

/**
 * The verdict of a chaos run: the counts of its last line, and one line per problem found.
 * Immutable and thread-safe.
 */
public final class ChaosReport {

    private final int tasks;
    private final int succeededOnce;
    private final int lost;
    private final int duplicated;
    private final int overlapping;
    private final int rerunsAfterFinish;
    private final int resumedElsewhere;
    private final List<String> problems;

    ChaosReport(int tasks, int succeededOnce, int lost, int duplicated, int overlapping, int rerunsAfterFinish,
                int resumedElsewhere, List<String> problems) {
        this.tasks = tasks;
        this.succeededOnce = succeededOnce;
        this.lost = lost;
        this.duplicated = duplicated;
        this.overlapping = overlapping;
        this.rerunsAfterFinish = rerunsAfterFinish;
        this.resumedElsewhere = resumedElsewhere;
        this.problems = List.copyOf(problems);
    }

    /** Returns how many tasks the run submitted. */
    public int getTasks() {
        return tasks;
    }

    /** Returns how many tasks succeeded exactly once, with a complete log. */
    public int getSucceededOnce() {
        return succeededOnce;
    }

    /** Returns how many tasks have no record or did not end SUCCEEDED. */
    public int getLost() {
        return lost;
    }

    /** Returns how many tasks ended (or succeeded) more than once. */
    public int getDuplicated() {
        return duplicated;
    }

    /** Returns how many tasks had two attempts running at the same time. */
    public int getOverlapping() {
        return overlapping;
    }

    /** Returns how many tasks' training ran to its end in more than one attempt (at-least-once, not a failure). */
    public int getRerunsAfterFinish() {
        return rerunsAfterFinish;
    }

    /**
     * Returns how many tasks had an attempt resume from a checkpoint that another worker committed
     * (restored from the store; not a failure count).
     */
    public int getResumedElsewhere() {
        return resumedElsewhere;
    }

    /** Returns one line per problem found (empty when clean). */
    public List<String> getProblems() {
        return problems;
    }

    /** Returns whether every task succeeded exactly once and nothing was lost, duplicated or overlapping. */
    public boolean isClean() {
        return tasks > 0 && succeededOnce == tasks && lost == 0 && duplicated == 0 && overlapping == 0
                && problems.isEmpty();
    }

    /** Returns the last line of the run. */
    public String summary() {
        return "chaos: " + tasks + " tasks, " + succeededOnce + " succeeded exactly once, " + lost + " lost, "
                + duplicated + " duplicated, " + overlapping + " overlapping, " + resumedElsewhere
                + " resumed from another worker's checkpoint";
    }

    @Override
    public String toString() {
        return summary();
    }
}
