/**
 * How the lease core works, and what the master and the worker share; not API, may change in
 * any release.
 *
 * <ul>
 *   <li>Redis: the key names of a namespace ({@link io.rlscheduler.core.internal.Keys}), the Lua
 *       script runner that falls back from EVALSHA to EVAL
 *       ({@link io.rlscheduler.core.internal.LuaScript}), the batching of concurrent calls into
 *       one script run ({@link io.rlscheduler.core.internal.ScriptBatcher}), the codec that writes
 *       script arguments in place ({@link io.rlscheduler.core.internal.Utf8Codec}), and the
 *       translation of Redis failures into the core's exceptions
 *       ({@link io.rlscheduler.core.internal.RedisFailures}).</li>
 *   <li>Shared by the runtimes: the lifecycle of a master or a worker
 *       ({@link io.rlscheduler.core.internal.Lifecycle}), the range checks of option setters
 *       ({@link io.rlscheduler.core.internal.Checks}), the one JSON mapper
 *       ({@link io.rlscheduler.core.internal.Json}), the one parser of {@code RLS_METRIC} lines
 *       ({@link io.rlscheduler.core.internal.MetricLines}), and the one rule for the environment
 *       variables a task may not set ({@link io.rlscheduler.core.internal.ReservedEnvironment}).</li>
 * </ul>
 */
package io.rlscheduler.core.internal;
