/**
 * The master's mechanisms, wired together by {@link io.rlscheduler.master.SchedulerMaster}; not
 * API, may change in any release.
 *
 * <ul>
 *   <li>Workers: {@link io.rlscheduler.master.internal.RpcServer} accepts their connections,
 *       each served by a {@link io.rlscheduler.master.internal.WorkerChannelHandler} (handshake,
 *       heartbeats, log batches) with what all connections share in a
 *       {@link io.rlscheduler.master.internal.MasterContext};
 *       {@link io.rlscheduler.master.internal.WorkerRegistry} holds the
 *       {@link io.rlscheduler.master.internal.ConnectedWorker}s. Over TLS with client
 *       certificates, {@link io.rlscheduler.master.internal.CertificateIdentity} holds a hello to
 *       the worker id its certificate names.</li>
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
