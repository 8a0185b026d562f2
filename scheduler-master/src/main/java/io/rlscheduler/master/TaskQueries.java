package io.rlscheduler.master;

import io.rlscheduler.core.internal.CheckpointEntry;
import io.rlscheduler.store.ArtifactNotFoundException;
import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.CheckpointManifest;
import io.rlscheduler.core.AttemptOutputs;
import io.rlscheduler.core.OutputsState;
import io.rlscheduler.store.RunLayout;
import io.rlscheduler.store.StoreKeys;
import io.rlscheduler.store.StoreUnavailableException;
import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.TaskIds;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.TaskRecord;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.core.WorkerInfo;
import io.rlscheduler.core.internal.LeaderStatus;
import io.rlscheduler.core.internal.LeaseCore;
import io.rlscheduler.master.internal.LeaderElector;
import io.rlscheduler.master.internal.WorkerRegistry;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The queries that read several records and judge them: runs side by side
 * ({@link SchedulerMaster#compare}), why a task waits ({@link SchedulerMaster#whyPending}), and the
 * provenance of a task's attempts ({@link TaskHandle#provenance()}), and a run's stored artifacts
 * ({@link TaskHandle#artifacts()}).
 * Blocks the caller while Redis answers, each answer bounded by the API timeout.
 */
final class TaskQueries {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(TaskQueries.class);

    private final LeaseCore core;
    private final WorkerRegistry registry;
    private final LeaderElector elector;
    private final MasterHealth.Await await;
    private final ArtifactStore store;

    TaskQueries(LeaseCore core, WorkerRegistry registry, LeaderElector elector, MasterHealth.Await await,
                ArtifactStore store) {
        this.store = store;
        this.core = core;
        this.registry = registry;
        this.elector = elector;
        this.await = await;
    }

    private <T> T await(CompletableFuture<T> answer) {
        return await.await(answer);
    }

    RunComparison compare(java.util.Collection<String> taskIds) {
        Objects.requireNonNull(taskIds, "taskIds");
        if (taskIds.isEmpty() || taskIds.size() > RunComparison.MAX_RUNS) {
            throw new IllegalArgumentException("compare takes 1 to " + RunComparison.MAX_RUNS + " task ids, not "
                    + taskIds.size());
        }
        java.util.Set<String> seen = new java.util.HashSet<>();
        List<CompletableFuture<Optional<TaskRecord>>> reads = new java.util.ArrayList<>(taskIds.size());
        for (String id : taskIds) {
            TaskIds.require(id, "task id");
            if (!seen.add(id)) {
                throw new IllegalArgumentException("task id " + id + " is given twice");
            }
        }
        List<CompletableFuture<List<AttemptProvenance>>> provenanceReads = new java.util.ArrayList<>(taskIds.size());
        for (String id : taskIds) {
            reads.add(core.getTask(id));
            provenanceReads.add(core.provenance().of(id));
        }
        List<TaskRecord> records = new java.util.ArrayList<>(taskIds.size());
        java.util.Iterator<String> ids = taskIds.iterator();
        for (CompletableFuture<Optional<TaskRecord>> read : reads) {
            String id = ids.next();
            records.add(await(read).orElseThrow(() -> new TaskNotFoundException(id)));
        }
        List<List<AttemptProvenance>> provenance = new java.util.ArrayList<>(taskIds.size());
        for (CompletableFuture<List<AttemptProvenance>> read : provenanceReads) {
            provenance.add(await(read));
        }
        return RunComparison.of(records, provenance);
    }

    /** The provenance of a task's attempts, by attempt number; the task's existence is read only when it has none. */
    List<AttemptProvenance> provenance(String taskId) {
        TaskIds.require(taskId, "task id");
        List<AttemptProvenance> attempts = await(core.provenance().of(taskId));
        if (attempts.isEmpty() && await(core.getTask(taskId)).isEmpty()) {
            throw new TaskNotFoundException(taskId);
        }
        return attempts;
    }

    PendingReason whyPending(String taskId) {
        TaskIds.require(taskId, "task id");
        CompletableFuture<List<WorkerInfo>> workers = core.listWorkers();
        CompletableFuture<Long> position = core.queuePosition(taskId);
        CompletableFuture<Boolean> parked = core.isParked(taskId);
        CompletableFuture<io.rlscheduler.core.internal.OwnerRecords.Shares> shares = core.owners().shares();
        TaskRecord task = await(core.getTask(taskId)).orElseThrow(() -> new TaskNotFoundException(taskId));
        CompletableFuture<Long> ownerAhead = core.owners().queuePosition(task);
        int scanLimit = core.getOptions().getClaimScanLimit();
        long ahead = await(position);
        List<TaskRecord> before = new java.util.ArrayList<>();
        // The tasks a claim may serve first: among the queue's first claimScanLimit (by priority,
        // then submit order), before it or behind it; judge keeps those the fair order puts first.
        for (long offset = 0; ahead >= 0 && offset < scanLimit; offset += 1000) {
            // Read a moment after the position: a task that left the queue meanwhile moves this one
            // up into the page, and it must not take its own room.
            await(core.listTasks(TaskState.QUEUED, (int) offset, (int) Math.min(1000, scanLimit - offset))).getTasks()
                    .stream().filter(t -> !t.getTaskId().equals(taskId)).forEach(before::add);
        }
        LeaderStatus leader = elector.current();
        if (leader != null && leader.getDeadlineMillis() < System.currentTimeMillis()) {
            leader = null; // its lease ran out since this master last looked: nobody may lead now
        }
        java.util.Set<String> connected = new java.util.HashSet<>();
        registry.snapshot().forEach(w -> connected.add(w.getWorkerId() + "/" + w.getSessionId()));
        PendingReason.Dispatch dispatch = new PendingReason.Dispatch(leader == null ? "" : leader.getLeaderId(),
                leader != null && leader.isSelf(), connected);
        List<io.rlscheduler.core.OwnerShare> all = await(shares).getOwners();
        io.rlscheduler.core.OwnerShare own = all.stream().filter(s -> s.getOwner().equals(task.getOwner())).findFirst()
                .orElse(new io.rlscheduler.core.OwnerShare(task.getOwner(), await(shares).getDefaults(), 0, 0, 0, 0));
        List<io.rlscheduler.core.Reservation> reservations = await(shares).getReservations();
        List<CompletableFuture<Optional<TaskRecord>>> reservedReads = reservations.stream()
                .map(r -> core.getTask(r.getTaskId())).toList();
        List<TaskRecord> reservedTasks = new java.util.ArrayList<>();
        for (CompletableFuture<Optional<TaskRecord>> read : reservedReads) {
            reservedTasks.add(await(read).orElse(null));
        }
        return PendingReason.judge(task, await(workers), ahead, scanLimit, before, dispatch, await(parked),
                new PendingReason.Fair(own, all, await(ownerAhead), reservations, reservedTasks));
    }

    /**
     * A run's stored artifacts: each committed checkpoint's files from its manifest (checked against
     * the SHA-256 Redis holds for it; a checkpoint whose manifest is gone or changed is left out and
     * logged), and the ended log.
     */
    RunArtifacts artifacts(String taskId) {
        TaskIds.require(taskId, "task id");
        List<CheckpointEntry> committed = await(core.artifacts().committed(taskId));
        if (committed.isEmpty() && await(core.getTask(taskId)).isEmpty()) {
            throw new TaskNotFoundException(taskId);
        }
        List<Artifact> out = new java.util.ArrayList<>();
        for (CheckpointEntry c : committed) {
            CheckpointManifest manifest = checkpointManifest(taskId, c);
            if (manifest == null) {
                continue;
            }
            for (CheckpointManifest.File f : manifest.files()) {
                out.add(new Artifact(Artifact.Kind.CHECKPOINT, c.attempt(), c.id(), f.path(),
                        RunLayout.checkpointFile(taskId, c.id(), f.path()), f.size(), f.sha256()));
            }
        }
        for (AttemptOutputs o : await(core.artifacts().outputs(taskId))) {
            if (o.getState() != OutputsState.PENDING && !o.getManifestKey().isEmpty()) {
                out.addAll(outputFiles(taskId, o));
            }
        }
        store.stat(RunLayout.log(taskId)).ifPresent(log -> out.add(new Artifact(Artifact.Kind.LOG, 0, null,
                taskId + ".log", log.getKey(), log.getSize(), null)));
        return new RunArtifacts(taskId, out, store);
    }

    /** The files an attempt's outputs manifest lists; none (logged) when it is gone or unreadable. */
    private List<Artifact> outputFiles(String taskId, AttemptOutputs o) {
        List<Artifact> files = new java.util.ArrayList<>();
        try (java.io.InputStream in = store.open(o.getManifestKey())) {
            com.fasterxml.jackson.databind.JsonNode manifest = io.rlscheduler.core.internal.Json.tree(
                    new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8));
            String prefix = RunLayout.outputs(taskId, o.getAttempt());
            for (com.fasterxml.jackson.databind.JsonNode f : manifest.path("files")) {
                String path = f.path("path").asText("");
                if (StoreKeys.isValid(path)) {
                    files.add(new Artifact(Artifact.Kind.OUTPUT, o.getAttempt(), null, path, StoreKeys.join(prefix, path),
                            f.path("size").asLong(), f.path("sha256").asText(null)));
                }
            }
        } catch (ArtifactNotFoundException e) {
            log.warn("task {}: the outputs manifest of attempt {} ({}) is not in the store", taskId, o.getAttempt(),
                    o.getManifestKey());
        } catch (java.io.IOException e) {
            log.warn("task {}: the outputs manifest of attempt {} is unreadable ({})", taskId, o.getAttempt(), e.getMessage());
        }
        return files;
    }

    private CheckpointManifest checkpointManifest(String taskId, CheckpointEntry c) {
        byte[] raw;
        try (java.io.InputStream in = store.open(c.manifestKey())) {
            raw = in.readAllBytes();
        } catch (ArtifactNotFoundException e) {
            log.warn("task {}: checkpoint {} is committed but its manifest {} is not in the store", taskId, c.id(),
                    c.manifestKey());
            return null;
        } catch (java.io.IOException e) {
            throw new StoreUnavailableException("cannot read " + c.manifestKey() + ": " + e, e);
        }
        try {
            if (!java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256").digest(raw))
                    .equals(c.sha256())) {
                log.warn("task {}: the manifest of checkpoint {} changed in the store (SHA-256 differs); left out",
                        taskId, c.id());
                return null;
            }
            return CheckpointManifest.parse(raw);
        } catch (java.io.IOException | java.security.NoSuchAlgorithmException e) {
            log.warn("task {}: the manifest of checkpoint {} is unreadable ({}); left out", taskId, c.id(), e.getMessage());
            return null;
        }
    }
}
