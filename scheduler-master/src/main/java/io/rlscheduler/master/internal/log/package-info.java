/**
 * The master's task log files; not API, may change in any release.
 * {@link io.rlscheduler.master.internal.log.TaskLogManager} writes each task's output lines to
 * {@code <dir>/<taskId>.log} off the Netty event loops and serves the followers of a log.
 */
package io.rlscheduler.master.internal.log;
