package io.rlscheduler.master.internal.auth;

import com.google.protobuf.ByteString;
import io.rlscheduler.core.internal.DaemonThreads;
import io.rlscheduler.core.internal.HelloRecord;
import io.rlscheduler.master.internal.WorkerRegistry;
import io.rlscheduler.protocol.Hello;
import io.rlscheduler.protocol.WorkerKeyProof;
import java.time.Duration;
import java.util.Base64;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * What every handshake of a master shares to decide who a hello comes from, beyond the shared
 * secret: the one Redis read of the worker id's registered session and key record
 * ({@link #lookup}), the check of a worker key's signature ({@link #verify}), whether keys are
 * required, the revocations heard at run time and the refusals counted.
 *
 * <p>A signature check costs about 0.5 ms of CPU with the JDK's Ed25519 (measured: 0.46 to 0.70
 * ms a check), too long to hold an event loop that serves hundreds of connections; so it runs on
 * {@value #CHECK_THREADS} daemon threads of its own with a queue of {@value #CHECK_QUEUE}: a
 * check that finds the queue full fails at once (its hello is refused, the worker retries after
 * its backoff). Thread-safe; {@link #close()} stops the threads.
 */
public final class WorkerAuthentication implements AutoCloseable {

    /** Threads that check signatures. */
    static final int CHECK_THREADS = 2;
    /** Signature checks waiting before more are refused. */
    static final int CHECK_QUEUE = 1024;

    private final Function<String, CompletableFuture<HelloRecord>> lookup;
    private final boolean keysRequired;
    private final Revocations revocations;
    private final HelloRefusals refusals = new HelloRefusals();
    private final ThreadPoolExecutor checks = new ThreadPoolExecutor(CHECK_THREADS, CHECK_THREADS, 0, TimeUnit.SECONDS,
            new ArrayBlockingQueue<>(CHECK_QUEUE), DaemonThreads.named("rls-master-key-check"));

    /**
     * @param lookup       reads a worker id's record at a hello (the core's {@code workerKeys().helloRecord})
     * @param keysRequired whether hellos must be made with a worker key
     * @param registry     the connected workers, whose connections a revocation closes
     * @param handshakeTimeout the longest a handshake takes: revocations heard are kept this long
     */
    public WorkerAuthentication(Function<String, CompletableFuture<HelloRecord>> lookup, boolean keysRequired,
                                WorkerRegistry registry, Duration handshakeTimeout) {
        this.lookup = lookup;
        this.keysRequired = keysRequired;
        this.revocations = new Revocations(registry, lookup, handshakeTimeout.multipliedBy(2));
    }

    /** Reads what Redis holds of the worker id: its registered session, whether it is live, its key record. */
    public CompletableFuture<HelloRecord> lookup(String workerId) {
        return lookup.apply(workerId);
    }

    /**
     * Checks a hello's signature against the worker's public key, on the check threads. Completes
     * with false for a signature that does not verify or a key that does not decode; fails (a
     * {@link java.util.concurrent.RejectedExecutionException}) when too many checks wait.
     *
     * @param publicKey the worker key's public key, base64 of its X.509 encoding, as Redis holds it
     */
    public CompletableFuture<Boolean> verify(String publicKey, Hello hello, ByteString serverNonce) {
        return CompletableFuture.supplyAsync(() -> {
            byte[] key;
            try {
                key = Base64.getDecoder().decode(publicKey);
            } catch (IllegalArgumentException e) {
                return false;
            }
            return WorkerKeyProof.verify(key, hello.getSignature(), serverNonce, hello.getClientNonce(), hello.getWorkerId(),
                    hello.getSessionId(), hello.getKeyId());
        }, checks);
    }

    /** Returns whether only hellos made with a worker key are accepted. */
    public boolean isKeyRequired() {
        return keysRequired;
    }

    /** Returns the revocations heard; register it as a listener of the event stream. */
    public Revocations revocations() {
        return revocations;
    }

    /** Returns the refused hellos by reason. */
    public HelloRefusals refusals() {
        return refusals;
    }

    /** Stops the check threads; checks still queued are dropped (their connections are closing). */
    @Override
    public void close() {
        checks.shutdownNow();
    }
}
