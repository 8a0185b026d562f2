/**
 * The master's implementation; not API, may change in any release. Among it,
 * {@link io.rlscheduler.master.internal.TaskLogManager} writes the task log files off the Netty
 * event loops and serves their followers.
 */
package io.rlscheduler.master.internal;
