package io.rlscheduler.master;

import java.util.List;
import java.util.Optional;

/**
 * Bearer tokens for the HTTP API (scheduler-http), one or more per user. A token's secret is made
 * here and shown once, by {@link #create}; Redis keeps only its SHA-256, so reading Redis gives no
 * one a token. A user's token makes that user the owner of what it submits; an admin token may
 * act for anyone. Thread-safe; each call is one Redis round trip.
 */
public interface ApiTokens {

    /**
     * Makes a token for {@code user}.
     *
     * @param user  the user, 1 to 128 of {@code [A-Za-z0-9._:-]} (a valid owner)
     * @param admin whether the token may act for every user
     * @return the token with its secret, the only time the secret is available
     * @throws IllegalArgumentException if the user name is not valid
     */
    ApiToken create(String user, boolean admin);

    /**
     * Revokes a token by its id; requests that show it are refused from then on.
     *
     * @return whether a token of that id existed
     */
    boolean revoke(String tokenId);

    /** Returns every token (without secrets), oldest first. */
    List<ApiTokenInfo> list();

    /** Returns the token whose secret this is, if it exists and is not revoked. */
    Optional<ApiTokenInfo> verify(String secret);
}
