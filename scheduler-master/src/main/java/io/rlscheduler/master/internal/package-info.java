/**
 * The master's implementation; not API, may change in any release: the dispatcher, the workers'
 * channel handler, the task watcher. The task log files and their followers are in
 * {@link io.rlscheduler.master.internal.log}.
 */
package io.rlscheduler.master.internal;
