package io.rlscheduler.core.internal;

import io.rlscheduler.core.TaskState;

/**
 * Names of the Redis keys of one namespace. Every key starts with the hash tag {@code {ns}}, so all
 * of a namespace lives in one Redis Cluster slot and every script's keys are co-located. The key
 * table is documented in docs/architecture.md and in lua/lib.lua.
 */
public final class Keys {

    private final String prefix;
    private final String[] core;

    /** Creates the key names of namespace {@code ns} (validated by CoreOptions). */
    public Keys(String ns) {
        this.prefix = "{" + ns + "}:";
        TaskState[] states = TaskState.values();
        this.core = new String[10 + states.length];
        core[0] = prefix + "tasks";
        core[1] = prefix + "specs";
        core[2] = prefix + "queue";
        core[3] = prefix + "workers";
        core[4] = prefix + "liveness";
        core[5] = prefix + "deadlines";
        core[6] = prefix + "epoch";
        core[7] = prefix + "seq";
        core[8] = prefix + "events";
        for (int i = 0; i < states.length; i++) {
            core[9 + i] = state(states[i]);
        }
        core[9 + states.length] = prefix + "shapes";
    }

    /** Returns the core keys every mutating script receives first, in lib.lua's order. */
    public String[] core() {
        return core.clone();
    }

    /** Returns the core keys followed by {@code extra}. */
    public String[] coreAnd(String... extra) {
        String[] keys = new String[core.length + extra.length];
        System.arraycopy(core, 0, keys, 0, core.length);
        System.arraycopy(extra, 0, keys, core.length, extra.length);
        return keys;
    }

    public String tasks() { return core[0]; }
    public String specs() { return core[1]; }
    public String queue() { return core[2]; }
    public String workers() { return core[3]; }
    public String liveness() { return core[4]; }
    public String deadlines() { return core[5]; }
    public String events() { return core[8]; }
    public String shapes() { return core[core.length - 1]; }

    /** Returns the index of tasks in {@code state}: task id by submit sequence. Not kept for QUEUED, whose index is {@link #queue()}. */
    public String state(TaskState state) {
        return prefix + "state:" + state.name();
    }

    /** Returns the index of an owner's tasks: task id by submit sequence. */
    public String owner(String owner) {
        return prefix + "owner:" + owner;
    }

    /** Returns the hash of settings the masters publish for every process of the namespace (the artifact store). */
    public String config() {
        return prefix + "config";
    }

    /** Returns the hash holding the masters' leadership lease. */
    public String leader() {
        return prefix + "leader";
    }

    /** Returns the list of a task's committed checkpoints, newest first (checkpoint.lua). */
    public String checkpoints(String taskId) {
        return prefix + "checkpoints:" + taskId;
    }

    /** Returns the hash of what each attempt of a task resumed from (checkpoint.lua). */
    public String restores(String taskId) {
        return prefix + "restores:" + taskId;
    }

    /** Returns the hash of what each attempt of a task left in its run directory (outputs.lua). */
    public String outputs(String taskId) {
        return prefix + "outputs:" + taskId;
    }

    /** Returns the key keeping the answer of one claim request, for replays. */
    public String claimRequest(String requestId) {
        return prefix + "request:claim:" + requestId;
    }

    /** Returns the hash of a task's attempts' provenance: attempt number -> JSON (ProvenanceFormat). */
    public String provenance(String taskId) { return prefix + "provenance:" + taskId; }

    /** Returns an owner's queue of claimable tasks that need GPUs ({@code gpus}) or none (lib.lua). */
    public String ownerQueue(String owner, boolean gpus) { return core[2] + (gpus ? ":g:" : ":c:") + owner; }

    /** Returns the hash of owners' limits: owner -> limits JSON, field '*' the lab's defaults (lib.lua). */
    public String limits() { return core[2] + ":limits"; }

    /** Returns the hash of worker keys' verifiers and revocations: worker id -> key record (worker_key.lua). */
    public String workerKeys() { return prefix + "worker-keys"; }

    /** Returns the hash of API tokens: SHA-256 of the token (hex) -> record JSON (api_token.lua). */
    public String apiTokens() { return prefix + "api-tokens"; }

    /** Returns the hash of API token ids: token id -> SHA-256 of the token (api_token.lua). */
    public String apiTokenIds() { return prefix + "api-token-ids"; }

    /** Returns a sweep's record (sweep.lua). */
    public String sweep(String sweepId) { return prefix + "sweep:" + sweepId; }

    /** Returns the index of sweeps: sweep id by creation time, ms (sweep.lua). */
    public String sweeps() { return prefix + "sweeps"; }

    /** Returns the index of an owner's sweeps: sweep id by creation time, ms (sweep.lua). */
    public String ownerSweeps(String owner) { return prefix + "sweeps:owner:" + owner; }

    /** Returns the hash of each sweep's runs: task id -> sweep id (sweep.lua). */
    public String sweepOf() { return prefix + "sweep-of"; }

    /** Returns the GPU readings of the workers connected to the leader: worker id to readings (JSON), a hash. */
    public String gpuReadings() { return prefix + "gpu-readings"; }
}
