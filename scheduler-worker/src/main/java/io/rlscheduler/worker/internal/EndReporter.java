package io.rlscheduler.worker.internal;

import io.netty.channel.Channel;
import io.rlscheduler.protocol.TaskStatusReport;

/**
 * Reports the end of each attempt to the master and keeps the report until the master
 * acknowledges it ({@code TaskStatusAck}), sending it again on every new connection. A report
 * follows the attempt's last lines on the channel, so the master can end the attempt's log as
 * soon as the report comes. The report waits on its attempt ({@link Attempt#getReport()}), so it
 * goes with the attempt once that is no longer held. Thread-safe.
 */
public final class EndReporter {

    private final MasterLink link;
    private final LogShipper shipper;

    public EndReporter(MasterLink link, LogShipper shipper) {
        this.link = link;
        this.shipper = shipper;
    }

    /** Makes the report of how {@code attempt} ended and keeps it until acknowledged; sends nothing yet. */
    public void hold(Attempt attempt, AttemptOutcome outcome, long endedAtUnixMs) {
        TaskStatusReport.Builder report = TaskStatusReport.newBuilder()
                .setTaskId(attempt.getLease().getTaskId()).setEpoch(attempt.getLease().getEpoch())
                .setAttempt(attempt.getTask().getAttempt()).setStatus(outcome.status())
                .setErrorMessage(outcome.error() == null ? "" : outcome.error())
                .setFinalMetricsJson(attempt.getMetrics().latestJson())
                .setLastLogSequence(attempt.getLogs().getLastSequence()).setEndedAtUnixMs(endedAtUnixMs)
                .setRunDir(attempt.getRunDir().toString());
        if (outcome.exitCode() != null) {
            report.setHasExitCode(true).setExitCode(outcome.exitCode());
        }
        attempt.setReport(report.build());
    }

    /** Sends the attempt's last lines and then its report, if connected. On the event loop only. */
    public void send(Attempt attempt) {
        TaskStatusReport report = attempt.getReport();
        Channel channel = link.readyChannel();
        if (report != null && channel != null) {
            shipper.write(channel, attempt);
            channel.writeAndFlush(report);
        }
    }

    /** On a new connection: writes the attempt's report again if it is unacknowledged; does not flush. */
    public void reconnected(Channel channel, Attempt attempt) {
        TaskStatusReport report = attempt.getReport();
        if (report != null) {
            channel.write(report);
        }
    }

    /** Takes the master's acknowledgement of the attempt's report; returns whether one was waiting. */
    public boolean acknowledged(Attempt attempt) {
        return attempt.takeReport() != null;
    }

    /** Returns whether the attempt's report waits for the master's acknowledgement. */
    public boolean isUnacknowledged(Attempt attempt) {
        return attempt.getReport() != null;
    }
}
