package io.rlscheduler.master;

import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.internal.WorkerKeyRecord;
import io.rlscheduler.core.internal.WorkerKeyRecords;
import io.rlscheduler.core.internal.WorkerKeyResult;
import io.rlscheduler.core.internal.WorkerRevocation;
import io.rlscheduler.protocol.WorkerKey;
import io.rlscheduler.protocol.WorkerKeyProof;
import java.security.KeyPair;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link WorkerKeys} of a master: makes each key pair here, hands the private key out once as the
 * key's material and stores only the verifier in Redis (the core's {@link WorkerKeyRecords}).
 * Thread-safe.
 */
final class MasterWorkerKeys implements WorkerKeys {

    private static final Logger log = LoggerFactory.getLogger(MasterWorkerKeys.class);
    private static final SecureRandom RANDOM = new SecureRandom();

    private final WorkerKeyRecords records;
    private final MasterHealth.Await await;

    MasterWorkerKeys(WorkerKeyRecords records, MasterHealth.Await await) {
        this.records = records;
        this.await = await;
    }

    @Override
    public String issue(String workerId) {
        return store(workerId, false);
    }

    @Override
    public String rotate(String workerId) {
        return store(workerId, true);
    }

    private String store(String workerId, boolean rotate) {
        TaskIds.require(workerId, "worker id");
        byte[] id = new byte[8];
        RANDOM.nextBytes(id);
        KeyPair pair = WorkerKeyProof.newKeyPair();
        WorkerKey key = WorkerKey.of(workerId, "k-" + HexFormat.of().formatHex(id), WorkerKeyProof.privateKeyBytes(pair.getPrivate()));
        String publicKey = Base64.getEncoder().encodeToString(pair.getPublic().getEncoded());
        String acceptKey = Base64.getEncoder().encodeToString(key.acceptKey());
        WorkerKeyResult result = await.await(rotate ? records.rotate(workerId, key.getKeyId(), publicKey, acceptKey)
                : records.issue(workerId, key.getKeyId(), publicKey, acceptKey));
        String current = result.getKey().map(WorkerKeyRecord::getKeyId).orElse("");
        switch (result.getStatus()) {
            case OK -> {
                log.info("worker key {} {} for worker {}", key.getKeyId(), rotate ? "rotated in" : "issued", workerId);
                return key.toMaterial();
            }
            case EXISTS -> throw new IllegalStateException("worker " + workerId + " has a key (" + current
                    + "): rotate it, or revoke the worker id first");
            case NO_KEY -> throw new IllegalStateException("no key was issued to worker " + workerId + ": issue one");
            case REVOKED -> throw new IllegalStateException("worker " + workerId
                    + " is revoked: issue it a new key (for a new machine) instead");
            default -> throw new IllegalStateException("unexpected answer " + result);
        }
    }

    @Override
    public WorkerKeyInfo revoke(String workerId) {
        TaskIds.require(workerId, "worker id");
        WorkerRevocation revocation = await.await(records.revoke(workerId));
        log.warn("worker {} revoked (key {}, session {}); tasks taken back: requeued {}, failed {}, cancelled {}", workerId,
                revocation.getKey().getKeyId().isEmpty() ? "none" : revocation.getKey().getKeyId(),
                revocation.getFencedSession().isEmpty() ? "none registered" : revocation.getFencedSession(),
                revocation.getTakenBack().getRequeued(), revocation.getTakenBack().getFailed(),
                revocation.getTakenBack().getCancelled());
        return info(revocation.getKey());
    }

    @Override
    public List<WorkerKeyInfo> list() {
        List<WorkerKeyInfo> out = new ArrayList<>();
        for (WorkerKeyRecord r : await.await(records.list())) {
            out.add(info(r));
        }
        return out;
    }

    private static WorkerKeyInfo info(WorkerKeyRecord r) {
        return new WorkerKeyInfo(r.getWorkerId(), r.getKeyId(), r.getCreatedAtMillis(), r.getRotatedAtMillis(),
                r.getRevokedAtMillis());
    }
}
