package io.rlscheduler.master.internal;

import com.google.protobuf.ByteString;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.internal.HelloRecord;
import io.rlscheduler.core.internal.LeaderStatus;
import io.rlscheduler.core.internal.WorkerKeyRecord;
import io.rlscheduler.master.internal.auth.WorkerAuthentication;
import io.rlscheduler.protocol.FrameFormat;
import io.rlscheduler.protocol.HandshakeProof;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.HelloAccepted;
import io.rlscheduler.protocol.HelloRejected;
import io.rlscheduler.protocol.RejectReason;
import io.rlscheduler.protocol.WorkerKey;
import io.rlscheduler.protocol.WorkerKeyProof;
import java.util.Base64;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The master's side of one connection's handshake, from its {@link Hello} to
 * {@link HelloAccepted} or {@link HelloRejected} (and the close). In order:
 * <ol>
 *   <li>the protocol version and the identity's form; the proof of the shared secret (unless
 *       the hello is made with a worker key, or keys are required: BAD_KEY);</li>
 *   <li>one Redis read of the worker id's registered session and key record
 *       ({@link WorkerAuthentication#lookup}), and for a hello made with a key the check of its
 *       signature against that key, off the event loop;</li>
 *   <li>a revoked worker id is refused (KEY_REVOKED); a key that is not the id's current one, a
 *       signature that does not verify, or the shared secret for an id that has a key of its own
 *       is refused (BAD_KEY);</li>
 *   <li>a master that does not lead sends the worker to the leader (NOT_LEADER);</li>
 *   <li>an id Redis does not know is refused (UNKNOWN_WORKER: a worker registers before it says
 *       hello), and so is a session other than the one Redis holds for the id
 *       (DUPLICATE_SESSION: another process uses the id); the connection of the registered
 *       session is not touched. The registered session saying hello again (a reconnect) replaces
 *       its previous connection.</li>
 * </ol>
 * A rejected worker never stays in the registry; every rejection is logged with the peer and
 * counted by reason.
 *
 * <p>Confined to the channel's event loop: the Redis read and the signature check complete
 * elsewhere and hand their answer back to it; a connection closed meanwhile (the handshake
 * timeout, the peer) is left alone. One per connection; not thread-safe.
 */
final class Handshake {

    private static final Logger log = LoggerFactory.getLogger(Handshake.class);

    private final MasterContext context;
    private final ByteString serverNonce;
    private boolean begun;

    /** What the Redis read and, for a key, the signature check found. */
    private record Checked(HelloRecord record, boolean signed) {
    }

    Handshake(MasterContext context, ByteString serverNonce) {
        this.context = context;
        this.serverNonce = serverNonce;
    }

    /**
     * Checks a hello; once the worker is in the registry (before it is told), calls
     * {@code admitted} with it on the event loop. Rejects and closes otherwise.
     */
    void onHello(ChannelHandlerContext ctx, Hello hello, Consumer<ConnectedWorker> admitted) {
        if (begun) {
            reject(ctx, RejectReason.REJECT_REASON_UNSPECIFIED, "one HELLO per connection");
            return;
        }
        begun = true;
        if (refuseForm(ctx, hello)) {
            return;
        }
        boolean withKey = !hello.getKeyId().isEmpty();
        if (withKey && !WorkerKey.isValidKeyId(hello.getKeyId())) {
            reject(ctx, RejectReason.REJECT_REASON_BAD_KEY, "a key id must be 1 to 64 of [A-Za-z0-9._-]");
            return;
        }
        if (!withKey && context.auth.isKeyRequired()) {
            reject(ctx, RejectReason.REJECT_REASON_BAD_KEY, "this master accepts worker keys only: configure worker "
                    + hello.getWorkerId() + " with its key (SchedulerMaster.workerKeys().issue)");
            return;
        }
        if (hello.getClientNonce().size() != HandshakeProof.NONCE_LENGTH || !withKey && !HandshakeProof.matches(
                HandshakeProof.helloProof(context.secret, serverNonce, hello.getClientNonce(), hello.getWorkerId(),
                        hello.getSessionId()), hello.getProof())) {
            reject(ctx, RejectReason.REJECT_REASON_AUTHENTICATION_FAILED,
                    "authentication failed: the proof does not match this master's shared secret");
            return;
        }
        long asked = System.nanoTime();
        CompletableFuture<Checked> checked;
        try {
            checked = context.auth.lookup(hello.getWorkerId()).thenCompose(record -> {
                Optional<WorkerKeyRecord> key = record.getKey().filter(k -> withKey && k.getKeyId().equals(hello.getKeyId()));
                return key.isEmpty() ? CompletableFuture.completedFuture(new Checked(record, false))
                        : context.auth.verify(key.get().getPublicKey(), hello, serverNonce).thenApply(ok -> new Checked(record, ok));
            });
        } catch (RuntimeException e) {
            checked = CompletableFuture.failedFuture(e);
        }
        checked.whenComplete((result, error) -> onLoop(ctx, () -> {
            if (!ctx.channel().isActive()) {
                return;
            }
            try {
                decide(ctx, hello, result, error, asked, admitted);
            } catch (RuntimeException e) {
                log.error("handshake of worker {} failed", hello.getWorkerId(), e);
                reject(ctx, RejectReason.REJECT_REASON_UNSPECIFIED, "the master could not check this hello; try again");
            }
        }));
    }

    /**
     * Refuses a hello of a protocol version not spoken here, of an identity not well formed, or
     * (over mutual TLS) of another worker id than the client certificate names; returns whether it did.
     */
    private boolean refuseForm(ChannelHandlerContext ctx, Hello hello) {
        String certificateMismatch;
        if (hello.getProtocolMajor() != FrameFormat.VERSION) {
            reject(ctx, RejectReason.REJECT_REASON_UNSUPPORTED_VERSION, "protocol major " + hello.getProtocolMajor()
                    + " is not supported; this master speaks " + FrameFormat.VERSION);
        } else if (hello.getProtocolMinor() < FrameFormat.MIN_MINOR_VERSION) {
            reject(ctx, RejectReason.REJECT_REASON_UNSUPPORTED_VERSION, "protocol " + FrameFormat.VERSION + "."
                    + hello.getProtocolMinor() + " is not supported; this master speaks " + FrameFormat.VERSION + "."
                    + FrameFormat.MIN_MINOR_VERSION + " and later");
        } else if (!TaskIds.isValid(hello.getWorkerId()) || !TaskIds.isValid(hello.getSessionId())) {
            reject(ctx, RejectReason.REJECT_REASON_INVALID_IDENTITY, "worker id and session id must be 1 to 128 of [A-Za-z0-9._-]");
        } else if ((certificateMismatch = CertificateIdentity.mismatch(ctx.channel(), hello.getWorkerId())) != null) {
            reject(ctx, RejectReason.REJECT_REASON_INVALID_IDENTITY, certificateMismatch);
        } else {
            return false;
        }
        return true;
    }

    private void decide(ChannelHandlerContext ctx, Hello hello, Checked checked, Throwable error, long asked,
                        Consumer<ConnectedWorker> admitted) {
        String id = hello.getWorkerId();
        if (error != null) {
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            log.warn("cannot check the hello of worker {}: {}", id, cause.toString());
            reject(ctx, RejectReason.REJECT_REASON_UNSPECIFIED, cause instanceof RejectedExecutionException
                    ? "the master is busy checking other hellos; try again"
                    : "the master cannot read worker " + id + "'s record from Redis; try again");
            return;
        }
        HelloRecord record = checked.record();
        if (refuseCredential(ctx, hello, record.getKey(), checked.signed()) || sendToLeader(ctx, id)) {
            return;
        }
        if (!record.isRegistered()) {
            reject(ctx, RejectReason.REJECT_REASON_UNKNOWN_WORKER, "Redis has no record of worker " + id
                    + ": a worker registers before it says hello");
            return;
        }
        if (!record.getSession().equals(hello.getSessionId())) {
            reject(ctx, RejectReason.REJECT_REASON_DUPLICATE_SESSION, "worker " + id + " is registered with another session"
                    + (record.isLive() ? ", which is live" : "") + ": another process uses this worker id");
            return;
        }
        admit(ctx, hello, record, asked, admitted);
    }

    /** Refuses a credential that does not fit the worker id's key record; returns whether it did. */
    private boolean refuseCredential(ChannelHandlerContext ctx, Hello hello, Optional<WorkerKeyRecord> key, boolean signed) {
        String id = hello.getWorkerId();
        if (!hello.getKeyId().isEmpty()) {
            if (key.isEmpty() || key.get().getKeyId().isEmpty()) {
                reject(ctx, RejectReason.REJECT_REASON_BAD_KEY, "no key is issued to worker " + id);
            } else if (!key.get().getKeyId().equals(hello.getKeyId())) {
                reject(ctx, RejectReason.REJECT_REASON_BAD_KEY, "key " + hello.getKeyId() + " is not worker " + id
                        + "'s current key (it was rotated, or it is another worker's)");
            } else if (!signed) {
                reject(ctx, RejectReason.REJECT_REASON_BAD_KEY, "the signature does not verify with worker " + id + "'s key "
                        + hello.getKeyId());
            } else if (key.get().isRevoked()) {
                reject(ctx, RejectReason.REJECT_REASON_KEY_REVOKED, "worker " + id + " was revoked");
            } else {
                return false;
            }
            return true;
        }
        if (key.isPresent() && key.get().isRevoked()) {
            reject(ctx, RejectReason.REJECT_REASON_KEY_REVOKED, "worker " + id + " was revoked");
        } else if (key.isPresent() && key.get().hasLiveKey()) {
            reject(ctx, RejectReason.REJECT_REASON_BAD_KEY, "worker " + id
                    + " has a key of its own: it must say hello with it, not with the shared secret");
        } else {
            return false;
        }
        return true;
    }

    private void admit(ChannelHandlerContext ctx, Hello hello, HelloRecord record, long asked,
                       Consumer<ConnectedWorker> admitted) {
        String id = hello.getWorkerId();
        ConnectedWorker worker = new ConnectedWorker(id, hello.getSessionId(), hello.getLabelsMap(), ctx.channel());
        ConnectedWorker previous = context.registry.add(worker);
        if (previous != null && previous.getChannel() != ctx.channel()) {
            log.info("worker {} reconnected; closing its previous connection {}", id, previous.getChannel().remoteAddress());
            previous.getChannel().close();
        }
        admitted.accept(worker);
        // Checked again once in the registry: a master that lost the leadership between the check
        // above and the add closed only the connections it found there (leadership is written
        // before that snapshot is taken), and a worker left on a standby would never get work.
        // Likewise a revocation heard since the read: its close found no entry of this one.
        if (sendToLeader(ctx, id)) {
            return; // its close removes it from the registry
        }
        if (context.auth.revocations().heardSince(id, asked)) {
            reject(ctx, RejectReason.REJECT_REASON_KEY_REVOKED, "worker " + id + " was revoked");
            return;
        }
        ByteString proof = hello.getKeyId().isEmpty()
                ? HandshakeProof.acceptProof(context.secret, hello.getClientNonce(), serverNonce, context.masterId)
                : WorkerKeyProof.acceptProof(Base64.getDecoder().decode(record.getKey().orElseThrow().getAcceptKey()),
                        hello.getClientNonce(), serverNonce, context.masterId, id, hello.getKeyId());
        int minor = Math.min(FrameFormat.MINOR_VERSION, hello.getProtocolMinor());
        ctx.writeAndFlush(HelloAccepted.newBuilder()
                .setProtocolMinor(minor).setMasterId(context.masterId).setProof(proof)
                .setHeartbeatIntervalMs(context.coreOptions.getHeartbeatInterval().toMillis())
                .setLivenessLeaseMs(context.coreOptions.getLivenessLease().toMillis())
                .setTaskLeaseMs(context.coreOptions.getTaskLease().toMillis())
                .build());
        log.info("worker {} (session {}{}) connected from {}", id, hello.getSessionId(),
                hello.getKeyId().isEmpty() ? "" : ", key " + hello.getKeyId(), ctx.channel().remoteAddress());
        context.dispatcher.trigger();
    }

    /** Unless this master leads: sends the worker to the leader (NOT_LEADER), closes, and returns true. */
    private boolean sendToLeader(ChannelHandlerContext ctx, String workerId) {
        LeaderStatus leader = context.leadership.get();
        if (leader != null && leader.isSelf()) {
            return false;
        }
        String address = leader == null ? "" : leader.getAddress();
        log.info("worker {} connected to standby master {}; sending it to the leader {}", workerId,
                context.masterId, address.isEmpty() ? "(unknown)" : address);
        context.auth.refusals().count(RejectReason.REJECT_REASON_NOT_LEADER);
        ctx.writeAndFlush(HelloRejected.newBuilder().setReason(RejectReason.REJECT_REASON_NOT_LEADER)
                        .setMessage("master " + context.masterId + " is a standby").setLeaderAddress(address).build())
                .addListener(ChannelFutureListener.CLOSE);
        return true;
    }

    private void reject(ChannelHandlerContext ctx, RejectReason reason, String message) {
        log.warn("rejected worker connection {}: {}", ctx.channel().remoteAddress(), message);
        context.auth.refusals().count(reason);
        ctx.writeAndFlush(HelloRejected.newBuilder().setReason(reason).setMessage(message).build())
                .addListener(ChannelFutureListener.CLOSE);
    }

    /** Runs {@code task} on the channel's event loop: at once when already there. */
    private static void onLoop(ChannelHandlerContext ctx, Runnable task) {
        if (ctx.executor().inEventLoop()) {
            task.run();
            return;
        }
        try {
            ctx.executor().execute(task);
        } catch (RejectedExecutionException e) {
            // The event loop is shutting down with the master: the connection closes with it.
        }
    }
}
