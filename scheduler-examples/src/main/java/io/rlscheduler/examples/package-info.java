/**
 * Example programs on the public API only: {@link io.rlscheduler.examples.LocalClusterDemo} (a
 * whole cluster in one process, the runnable jar's main class),
 * {@link io.rlscheduler.examples.MasterMain} and {@link io.rlscheduler.examples.WorkerMain} (a
 * master and a worker as processes of their own, set by arguments or {@code RLS_*} environment
 * variables), and {@link io.rlscheduler.examples.Quickstart} (the README's embedding example).
 */
package io.rlscheduler.examples;
