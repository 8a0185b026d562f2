package io.rlscheduler.master;

/**
 * A stored API token, without its secret: its id, its user, whether it is an admin's, and when it
 * was made (ms since the epoch, Redis's clock).
 */
public record ApiTokenInfo(String id, String user, boolean admin, long createdAtMillis) {
}
