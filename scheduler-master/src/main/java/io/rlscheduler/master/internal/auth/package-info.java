/**
 * Who a worker's hello comes from, beyond the shared-secret proof: not API.
 *
 * <ul>
 *   <li>{@link io.rlscheduler.master.internal.auth.WorkerAuthentication}: what every handshake of
 *       a master shares: the one Redis read of a worker id's session and key record, the checks
 *       of worker keys' signatures off the event loops, and whether keys are required.</li>
 *   <li>{@link io.rlscheduler.master.internal.auth.Revocations}: closes the connections of worker
 *       ids revoked at run time, as the event stream tells of them.</li>
 *   <li>{@link io.rlscheduler.master.internal.auth.HelloRefusals}: the refused hellos, counted by
 *       reason for {@code health()}.</li>
 * </ul>
 *
 * <p>The handshake itself is {@code io.rlscheduler.master.internal.Handshake}; the proofs are
 * {@link io.rlscheduler.protocol.HandshakeProof} and {@link io.rlscheduler.protocol.WorkerKeyProof}.
 */
package io.rlscheduler.master.internal.auth;
