/**
 * Implementation details of the worker's executors: command lines, script path checks, output line
 * splitting, process groups read from {@code /proc}. Not public API: anything here may change
 * without notice; use the types in {@code io.rlscheduler.worker}.
 */
package io.rlscheduler.worker.internal;
