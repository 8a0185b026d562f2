package io.rlscheduler.master;

import java.util.List;

/**
 * Worker keys: one credential per worker machine, beside the lab's shared secret
 * ({@link SchedulerMaster#workerKeys()}; docs/operations.md, worker keys). A key is an Ed25519
 * key pair bound to one worker id: the worker signs its hello with the private key, which only
 * it holds; Redis keeps the public key and an accept key (the master's proof to that worker),
 * never the private key. Once a worker id has a key, its hellos must be made with it (the shared
 * secret no longer lets anyone say hello as that worker); a revoked worker id is refused,
 * whatever it proves.
 *
 * <p>Thread-safe. Each method blocks while Redis answers, up to the master's {@code apiTimeout}
 * ({@link io.rlscheduler.core.SchedulerTimeoutException} after it); do not call them from an
 * event loop. Every master of the namespace sees a change at once.
 */
public interface WorkerKeys {

    /**
     * Issues a worker id its key and returns the key's material: one line of text, shown this
     * once (Redis keeps only the verifier). Put it on the worker's machine, in a file only the
     * worker's user can read, and configure the worker with it ({@code WorkerOptions.workerKeyFile}).
     * Issuing for a revoked worker id lifts the revocation: do it for a new machine.
     *
     * @throws IllegalArgumentException if {@code workerId} is not a valid worker id
     * @throws IllegalStateException    if the worker id has a key that is not revoked (rotate it instead)
     */
    String issue(String workerId);

    /**
     * Gives a worker id a new key and returns its material, shown this once. From now on hellos
     * with the old key are refused (BAD_KEY); a connection made with it stays up and its tasks go
     * on, until it reconnects, which it does with the key its key file holds then.
     *
     * @throws IllegalArgumentException if {@code workerId} is not a valid worker id
     * @throws IllegalStateException    if no key was issued to the worker id, or it is revoked
     */
    String rotate(String workerId);

    /**
     * Revokes a worker id, with a key of its own or without (a machine lost or stolen): every
     * master closes its connection within moments (it hears the revocation from the event
     * stream), its hellos and registrations are refused from then on, the tasks it holds are taken
     * back at once (each re-queued once, not counted as a lease loss) and its registration is
     * removed, so that its session's writes fail the fencing in Redis. Safe to repeat.
     *
     * @return the revoked worker id's key record
     * @throws IllegalArgumentException if {@code workerId} is not a valid worker id
     */
    WorkerKeyInfo revoke(String workerId);

    /** Returns every worker id with a key or a revocation, by worker id; never a key's secret part. */
    List<WorkerKeyInfo> list();
}
