/**
 * How the lease core works, not part of its API: the Redis key names of a namespace
 * ({@link io.rlscheduler.core.internal.Keys}), the Lua script runner that falls back from EVALSHA
 * to EVAL ({@link io.rlscheduler.core.internal.LuaScript}), the batching of concurrent calls into
 * one script run ({@link io.rlscheduler.core.internal.ScriptBatcher}), the codec that writes
 * script arguments in place ({@link io.rlscheduler.core.internal.Utf8Codec}), and the
 * translation of Redis failures into the core's exceptions
 * ({@link io.rlscheduler.core.internal.RedisFailures}). Masters and workers may use it; users of
 * rl-scheduler should not, as it changes without notice.
 */
package io.rlscheduler.core.internal;
