package io.rlscheduler.core.internal;

import java.util.List;

/**
 * The answer to {@link LeaseCore#submitAndClaim}: the submission's, and the claim's for each
 * worker in the order given (which may include the new task). Immutable.
 */
public final class SubmitAndClaimResult {

    private final SubmitResult submit;
    private final List<ClaimResult> claims;

    SubmitAndClaimResult(SubmitResult submit, List<ClaimResult> claims) {
        this.submit = submit;
        this.claims = List.copyOf(claims);
    }

    /** Returns the submission's answer, as {@link LeaseCore#submit} gives it. */
    public SubmitResult getSubmit() {
        return submit;
    }

    /** Returns the claim's answer per worker, as {@link LeaseCore#claim} gives it. */
    public List<ClaimResult> getClaims() {
        return claims;
    }

    @Override
    public String toString() {
        return "SubmitAndClaimResult{submit=" + submit + ", claims=" + claims + '}';
    }
}
