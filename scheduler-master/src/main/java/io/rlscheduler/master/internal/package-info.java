/**
 * The master's mechanisms, wired together by {@link io.rlscheduler.master.SchedulerMaster}; not
 * API, may change in any release.
 *
 * <ul>
 *   <li>Workers: {@link io.rlscheduler.master.internal.RpcServer} accepts their connections,
 *       each served by a {@link io.rlscheduler.master.internal.WorkerChannelHandler} (heartbeats,
 *       log batches; the handshake is its {@code Handshake}, deciding with what
 *       {@link io.rlscheduler.master.internal.auth} knows of worker ids) with what all connections
 *       share in a {@link io.rlscheduler.master.internal.MasterContext};
 *       {@link io.rlscheduler.master.internal.WorkerRegistry} holds the
 *       {@link io.rlscheduler.master.internal.ConnectedWorker}s. Over TLS with client
 *       certificates, {@link io.rlscheduler.master.internal.CertificateIdentity} holds a hello to
 *       the worker id its certificate names. {@link io.rlscheduler.master.internal.TaskFrameGate}
 *       checks each task-scoped frame against the attempt's holder
 *       ({@link io.rlscheduler.master.internal.AttemptHolders}) before anything of it is written.</li>
 *   <li>Limits on authenticated workers ({@link io.rlscheduler.master.internal.WorkerLimits}):
 *       {@link io.rlscheduler.master.internal.WorkerPipeline} puts an
 *       {@link io.rlscheduler.master.internal.InboundThrottle} (bytes per second) and an
 *       {@link io.rlscheduler.master.internal.IdleWorkerCloser} (silence) before each connection's
 *       decoder; {@link io.rlscheduler.master.internal.OpenAttempts} holds a connection to its
 *       open attempts, which {@link io.rlscheduler.master.internal.OpenAttemptIndex} closes when
 *       their logs end.</li>
 *   <li>Leadership: {@link io.rlscheduler.master.internal.LeaderElector} keeps the leadership
 *       lease; while this master leads, {@link io.rlscheduler.master.internal.Dispatcher} moves
 *       queued tasks to connected workers and {@link io.rlscheduler.master.internal.Reaper} takes
 *       back expired leases.</li>
 *   <li>Events: {@link io.rlscheduler.master.internal.TaskWatcher} follows the lease core's event
 *       stream: it completes results, ends logs (the event of an end its worker recorded is the
 *       one source of an attempt's end) and triggers dispatch rounds.</li>
 * </ul>
 *
 * <p>The task log files and their followers are in {@link io.rlscheduler.master.internal.log}.
 */
package io.rlscheduler.master.internal;
