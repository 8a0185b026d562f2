package io.rlscheduler.master;

import java.util.Objects;

/**
 * A token just made by {@link ApiTokens#create}: its stored part and its secret, which is
 * available only here. Its {@link #toString()} leaves the secret out.
 */
public final class ApiToken {

    private final ApiTokenInfo info;
    private final String secret;

    ApiToken(ApiTokenInfo info, String secret) {
        this.info = Objects.requireNonNull(info, "info");
        this.secret = Objects.requireNonNull(secret, "secret");
    }

    /** Returns the token's id (safe to show and log; revoke by it). */
    public String getId() { return info.id(); }

    /** Returns the secret to send as {@code Authorization: Bearer <secret>}. */
    public String getSecret() { return secret; }

    /** Returns the token's user. */
    public String getUser() { return info.user(); }

    /** Returns whether it is an admin token. */
    public boolean isAdmin() { return info.admin(); }

    /** Returns the stored part. */
    public ApiTokenInfo getInfo() { return info; }

    @Override
    public String toString() {
        return "ApiToken{" + info.id() + ", user=" + info.user() + (info.admin() ? ", admin" : "") + '}';
    }
}
