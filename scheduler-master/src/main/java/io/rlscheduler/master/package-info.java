/**
 * The master runtime's public API. So far: following a task's log
 * ({@link io.rlscheduler.master.LogFollow}, {@link io.rlscheduler.master.LogRecord}).
 */
package io.rlscheduler.master;
