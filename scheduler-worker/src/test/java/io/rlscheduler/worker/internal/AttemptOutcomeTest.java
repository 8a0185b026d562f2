package io.rlscheduler.worker.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.rlscheduler.core.TaskState;
import io.rlscheduler.worker.ExecutionResult;
import io.rlscheduler.worker.StopReason;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** Every way {@link AttemptOutcome#classify} can end an attempt. */
class AttemptOutcomeTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private static AttemptOutcome classify(int exitCode, StopReason reason, String error) {
        return AttemptOutcome.classify(new ExecutionResult(exitCode, reason, error), false, false, TIMEOUT);
    }

    private static void assertOutcome(AttemptOutcome outcome, TaskState state, Integer exitCode, String error) {
        assertThat(outcome).isEqualTo(new AttemptOutcome(state, exitCode, error));
    }

    @Test
    void exitZeroWithoutErrorSucceeds() {
        AttemptOutcome o = classify(0, StopReason.NONE, "");
        assertOutcome(o, TaskState.SUCCEEDED, 0, "");
        assertThat(o.isRecorded()).isTrue();
    }

    @Test
    void exitZeroWithAnExecutorErrorFailsWithThatError() {
        assertOutcome(classify(0, StopReason.NONE, "output lost"), TaskState.FAILED, 0, "output lost");
    }

    @Test
    void aNonZeroExitFailsNamingTheCode() {
        assertOutcome(classify(3, StopReason.NONE, ""), TaskState.FAILED, 3,
                "exited with code 3");
        assertOutcome(classify(128, StopReason.NONE, ""), TaskState.FAILED,
                128, "exited with code 128");
    }

    @Test
    void anExitAbove128FailsNamingTheSignal() {
        assertOutcome(classify(137, StopReason.NONE, ""), TaskState.FAILED,
                137, "killed by signal 9");
    }

    @Test
    void aNonZeroExitWithAnErrorKeepsTheError() {
        assertOutcome(classify(1, StopReason.NONE, "spawn failed"), TaskState.FAILED, 1, "spawn failed");
    }

    @Test
    void aCancelledAttemptIsCancelledWithItsErrorOrTheWordCancelled() {
        assertOutcome(classify(143, StopReason.CANCELLED, ""), TaskState.CANCELLED, 143, "cancelled");
        assertOutcome(classify(143, StopReason.CANCELLED, "killed after grace"), TaskState.CANCELLED, 143, "killed after grace");
    }

    @Test
    void aTimedOutAttemptNamesItsTimeout() {
        assertOutcome(classify(143, StopReason.TIMED_OUT, "ignored"), TaskState.TIMED_OUT, 143, "ran past its timeout of PT5S");
    }

    @ParameterizedTest
    @EnumSource(value = StopReason.class, names = {"FENCED", "SHUTDOWN"})
    void aFencedOrShutDownAttemptIsNotRecorded(StopReason reason) {
        AttemptOutcome o = classify(137, reason, "whatever");
        assertOutcome(o, null, 137, reason.name().toLowerCase());
        assertThat(o.isRecorded()).isFalse();
    }

    @Test
    void anAttemptThatEndedByItselfAfterTheLauncherFencedItIsFenced() {
        AttemptOutcome o = AttemptOutcome.classify(new ExecutionResult(137, StopReason.NONE, ""), true, false, TIMEOUT);
        assertOutcome(o, null, 137, "fenced");
    }

    @Test
    void anAttemptThatEndedByItselfWithItsLeaseOverdueIsFenced() {
        AttemptOutcome o = AttemptOutcome.classify(new ExecutionResult(0, StopReason.NONE, ""), false, true, TIMEOUT);
        assertOutcome(o, null, 0, "fenced");
    }

    @Test
    void fenceFactsDoNotOverrideAStopTheWorkerAskedFor() {
        AttemptOutcome o = AttemptOutcome.classify(new ExecutionResult(143, StopReason.CANCELLED, ""), true, true, TIMEOUT);
        assertOutcome(o, TaskState.CANCELLED, 143, "cancelled");
        o = AttemptOutcome.classify(new ExecutionResult(143, StopReason.TIMED_OUT, ""), true, true, TIMEOUT);
        assertThat(o.state()).isEqualTo(TaskState.TIMED_OUT);
    }

    @Test
    void aLaunchFailureFailsWithoutAnExitCode() {
        assertOutcome(AttemptOutcome.launchFailed("no such script"), TaskState.FAILED, null, "launch failed: no such script");
    }

    @Test
    void anExecutorFailureFailsWithoutAnExitCode() {
        assertOutcome(AttemptOutcome.executorFailed(new IllegalStateException("boom")), TaskState.FAILED, null, "the executor failed: java.lang.IllegalStateException: boom");
    }

    @Test
    void anOutcomeRedisDidNotTakeIsNotRecordedAndNamedFenced() {
        AttemptOutcome o = classify(0, StopReason.NONE, "").notTaken();
        assertOutcome(o, null, 0, "");
        assertThat(o.isRecorded()).isFalse();
        assertThat(o.label()).isEqualTo("FENCED");
        assertThat(classify(3, StopReason.NONE, "").label()).isEqualTo("FAILED");
    }
}
