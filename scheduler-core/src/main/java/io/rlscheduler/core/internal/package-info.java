/**
 * How the lease core works, not part of its API: masters and workers use it; users of rl-scheduler
 * should not, as it changes without notice.
 *
 * <ul>
 *   <li>The gateway to one namespace in Redis, {@link io.rlscheduler.core.internal.LeaseCore}: every
 *       ownership-dependent change is one script run, atomic and fenced by epoch. What goes in
 *       ({@link io.rlscheduler.core.internal.TaskDefinition},
 *       {@link io.rlscheduler.core.internal.WorkerRegistration}) and the result and status of each
 *       call (claims, heartbeats, writes, requeues, cancels, leadership). Worker keys' verifiers,
 *       revocations and what a master reads at a hello: {@link io.rlscheduler.core.internal.WorkerKeyRecords}.</li>
 *   <li>The event stream read as {@link io.rlscheduler.core.TaskEvent}s through an
 *       {@link io.rlscheduler.core.internal.EventSubscription}, with the ids of its entries
 *       ({@link io.rlscheduler.core.internal.EventIds}).</li>
 *   <li>The mechanics: the Redis key names of a namespace ({@link io.rlscheduler.core.internal.Keys}),
 *       the Lua script runner that falls back from EVALSHA to EVAL
 *       ({@link io.rlscheduler.core.internal.LuaScript}), the batching of concurrent calls into one
 *       script run ({@link io.rlscheduler.core.internal.ScriptBatcher}), the codec that writes script
 *       arguments in place ({@link io.rlscheduler.core.internal.Utf8Codec}), the reading of script
 *       replies into the core's types ({@code Replies}, with the value constructors of
 *       {@link io.rlscheduler.core.internal.ValueFactory}), the translation of Redis failures into
 *       the core's exceptions ({@link io.rlscheduler.core.internal.RedisFailures}), the stored form
 *       of an attempt's provenance ({@link io.rlscheduler.core.internal.ProvenanceFormat}), and the JVM's one
 *       set of Lettuce threads ({@link io.rlscheduler.core.internal.SharedClientResources}).</li>
 *   <li>Helpers the master and the worker share: JSON ({@link io.rlscheduler.core.internal.Json}),
 *       metric lines ({@link io.rlscheduler.core.internal.MetricLines}), the reserved environment
 *       ({@link io.rlscheduler.core.internal.ReservedEnvironment}), range checks
 *       ({@link io.rlscheduler.core.internal.Checks}) and the lifecycle of a runtime
 *       ({@link io.rlscheduler.core.internal.Lifecycle}).</li>
 * </ul>
 */
package io.rlscheduler.core.internal;
