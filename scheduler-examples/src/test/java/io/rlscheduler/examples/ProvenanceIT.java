package io.rlscheduler.examples;

import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.TaskNotFoundException;
import io.rlscheduler.core.TaskState;
import io.rlscheduler.master.RunComparison;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.testkit.RedisExtension;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.ExecutionResult;
import io.rlscheduler.worker.StopReason;
import io.rlscheduler.worker.TaskContext;
import io.rlscheduler.worker.TaskExecution;
import io.rlscheduler.worker.TaskExecutor;
import io.rlscheduler.worker.TaskOutput;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Each attempt's provenance end to end: real Redis, a master and a worker over loopback, real
 * python3 processes, real git on a repository made in a temporary directory, and an nvidia-smi
 * stand-in (a shell script) that reports one of the worker's two configured GPUs.
 */
class ProvenanceIT {

    @RegisterExtension
    static RedisExtension redisExtension = new RedisExtension();

    private static final String SCRIPT = "prov.py";
    private static final String GPU0_UUID = "GPU-5f1c0e2a-0000-4000-8000-000000000000";

    @TempDir
    Path dir;

    private Cluster cluster;
    private Path repo;
    private Path plain;

    @BeforeEach
    void start(TestRedis redis, RedisNamespace ns) throws Exception {
        repo = Files.createDirectories(dir.resolve("repo")).toRealPath();
        plain = Files.createDirectories(dir.resolve("plain")).toRealPath();
        assertThat(run(plain, "git", "rev-parse", "--is-inside-work-tree").exitCode)
                .as("the plain script root must lie outside every git work tree").isNotZero();
        git("init", "-q");
        Files.writeString(repo.resolve(SCRIPT), "import os\nprint('provenance of', os.environ['RLS_TASK_ID'])\n");
        Files.writeString(repo.resolve("README"), "scripts\n");
        Files.writeString(plain.resolve("outside.py"), "print('outside any repository')\n");
        git("add", SCRIPT, "README");
        git("commit", "-q", "-m", "first");
        Path nvidiaSmi = dir.resolve("nvidia-smi");
        Files.writeString(nvidiaSmi, "#!/bin/sh\necho '0, " + GPU0_UUID + ", Fake GPU, 81559, 10, 0'\n");
        Files.setPosixFilePermissions(nvidiaSmi, PosixFilePermissions.fromString("rwx------"));

        cluster = new Cluster(redis, ns, dir);
        cluster.workerBuilder("w1", 0, 1).scriptRoots(repo, plain).nvidiaSmi(nvidiaSmi.toString()).build().start();
        // GPUs are configured, so nvidia-smi is first asked at a heartbeat: wait until it has answered.
        await().atMost(Duration.ofSeconds(20)).until(() -> cluster.master.health().getWorkerUsage().stream()
                .anyMatch(u -> !u.getGpus().isEmpty()));
    }

    @AfterEach
    void stop() {
        if (cluster != null) {
            cluster.close();
        }
    }

    private AttemptProvenance runToEnd(String taskId, String script, int gpus) throws Exception {
        TaskHandle handle = cluster.master.submit(TaskSpec.python(script).taskId(taskId).gpus(gpus).build());
        assertThat(handle.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
        // Collected just after the start, without holding it up: it may come after the end.
        await().atMost(Duration.ofSeconds(20)).until(() -> !handle.provenance().isEmpty());
        List<AttemptProvenance> attempts = handle.provenance();
        assertThat(attempts).hasSize(1);
        AttemptProvenance p = attempts.get(0);
        assertThat(p.getTaskId()).isEqualTo(taskId);
        assertThat(p.getAttempt()).isEqualTo(1);
        assertThat(p.getEpoch()).isEqualTo(handle.getRecord().getEpoch());
        assertThat(p.getWorkerId()).isEqualTo("w1");
        assertThat(p.getHostname()).isNotBlank();
        assertThat(p.getInterpreter()).isEqualTo("python3");
        assertThat(p.getInterpreterVersion()).isEqualTo(run(dir, "python3", "--version").output.strip());
        return p;
    }

    @Test
    void anAttemptRecordsItsScriptsHashCommitAndDirtyFlagAndItsGpusUuids() throws Exception {
        String commit = git("rev-parse", "HEAD");

        AttemptProvenance clean = runToEnd("clean-1", SCRIPT, 2);
        assertThat(clean.getScriptFile()).isEqualTo(repo.resolve(SCRIPT).toString());
        assertThat(clean.getScriptSha256()).isEqualTo(sha256(repo.resolve(SCRIPT)));
        assertThat(clean.getGitCommit()).isEqualTo(commit);
        assertThat(clean.isGitDirty()).isFalse();
        assertThat(clean.getGpus()).extracting(AttemptProvenance.Gpu::getIndex).containsExactly(0, 1);
        assertThat(clean.getGpus()).extracting(AttemptProvenance.Gpu::getUuid)
                .as("GPU 1 is configured but nvidia-smi does not report it: its UUID is unknown")
                .containsExactly(GPU0_UUID, null);

        Files.writeString(repo.resolve(SCRIPT), "print('changed, not committed')\n");
        AttemptProvenance dirty = runToEnd("dirty-1", SCRIPT, 0);
        assertThat(dirty.getScriptSha256()).isEqualTo(sha256(repo.resolve(SCRIPT))).isNotEqualTo(clean.getScriptSha256());
        assertThat(dirty.getGitCommit()).isEqualTo(commit);
        assertThat(dirty.isGitDirty()).isTrue();
        assertThat(dirty.getGpus()).isEmpty();

        RunComparison both = cluster.master.compare("clean-1", "dirty-1");
        assertThat(both.isCodeDiffering()).isTrue();
        assertThat(both.getRuns().get(1).getProvenance()).singleElement().extracting(AttemptProvenance::isGitDirty)
                .isEqualTo(true);
        assertThat(both.toTable()).contains("+dirty");
    }

    @Test
    void aNewScriptNotYetCommittedMakesTheTreeDirty() throws Exception {
        Files.writeString(repo.resolve("new.py"), "print('not added')\n");
        AttemptProvenance untracked = runToEnd("untracked-1", "new.py", 0);
        assertThat(untracked.getGitCommit()).isEqualTo(git("rev-parse", "HEAD"));
        assertThat(untracked.isGitDirty()).isTrue();
    }

    @Test
    void aScriptOutsideAnyRepositoryHasNoCommitButItsHostAndInterpreter() throws Exception {
        AttemptProvenance outside = runToEnd("outside-1", "outside.py", 1);
        assertThat(outside.getScriptFile()).isEqualTo(plain.resolve("outside.py").toString());
        assertThat(outside.getScriptSha256()).isEqualTo(sha256(plain.resolve("outside.py")));
        assertThat(outside.getGitCommit()).isNull();
        assertThat(outside.isGitDirty()).isFalse();
        assertThat(outside.getGpus()).singleElement().extracting(AttemptProvenance.Gpu::getUuid).isEqualTo(GPU0_UUID);
        assertThatThrownBy(() -> cluster.master.task("no-such-task").provenance())
                .isInstanceOf(TaskNotFoundException.class);
    }

    /**
     * A worker of in-JVM attempts (labelled runs=in-jvm) whose attempts end when {@code end}
     * completes; its own run root and state directory.
     */
    private void inJvmWorker(CompletableFuture<ExecutionResult> end) {
        cluster.start(cluster.workerBuilder("w2").labels(Map.of("runs", "in-jvm")).runRoot(dir.resolve("runs-w2"))
                .executor(new TaskExecutor() {
                    @Override
                    public TaskExecution start(TaskContext context, TaskOutput output) {
                        return new TaskExecution() {
                            @Override
                            public CompletableFuture<ExecutionResult> completion() {
                                return end;
                            }

                            @Override
                            public void stop(StopReason reason, Duration grace) {
                                end.complete(new ExecutionResult(143, reason, "stopped"));
                            }
                        };
                    }

                    @Override
                    public boolean usesRunDirectories() {
                        return false;
                    }
                }));
    }

    @Test
    void anAttemptThatEndsAtOnceHasItsProvenanceStoredByTheRunThatRecordsItsEnd() throws Exception {
        inJvmWorker(CompletableFuture.completedFuture(new ExecutionResult(0, StopReason.NONE, "")));
        TaskHandle handle = cluster.master.submit(TaskSpec.python("in-jvm.py").taskId("jvm-1").selector("runs", "in-jvm")
                .build());

        assertThat(handle.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
        // No wait: the script run that recorded the end stored it. Written alone, it would come
        // a second after the start (ProvenanceRecorder's hold), after the end.
        assertThat(handle.provenance()).singleElement().satisfies(p -> {
            assertThat(p.getWorkerId()).isEqualTo("w2");
            assertThat(p.getEpoch()).isEqualTo(handle.getRecord().getEpoch());
            assertThat(p.getHostname()).isNotBlank();
            assertThat(p.getScriptFile()).as("an in-JVM execution runs no file").isNull();
            assertThat(p.getInterpreter()).isNull();
        });
    }

    @Test
    void aLongerAttemptHasItsProvenanceWrittenWhileItRuns() throws Exception {
        CompletableFuture<ExecutionResult> end = new CompletableFuture<>();
        inJvmWorker(end);
        TaskHandle handle = cluster.master.submit(TaskSpec.python("in-jvm.py").taskId("jvm-2").selector("runs", "in-jvm")
                .build());

        await().atMost(Duration.ofSeconds(20)).until(() -> !handle.provenance().isEmpty());
        assertThat(handle.getRecord().getState()).isEqualTo(TaskState.RUNNING);
        end.complete(new ExecutionResult(0, StopReason.NONE, ""));
        assertThat(handle.result().get(60, TimeUnit.SECONDS).getState()).isEqualTo(TaskState.SUCCEEDED);
        assertThat(handle.provenance()).singleElement().extracting(AttemptProvenance::getWorkerId).isEqualTo("w2");
    }

    private static String sha256(Path file) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    }

    private String git(String... args) throws Exception {
        String[] command = new String[args.length + 5];
        command[0] = "git";
        command[1] = "-c";
        command[2] = "user.name=Provenance Test";
        command[3] = "-c";
        command[4] = "user.email=provenance@example.invalid";
        System.arraycopy(args, 0, command, 5, args.length);
        Ran ran = run(repo, command);
        assertThat(ran.exitCode).as("git %s: %s", List.of(args), ran.output).isZero();
        return ran.output.strip();
    }

    private record Ran(int exitCode, String output) {
    }

    private static Ran run(Path in, String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).directory(in.toFile()).redirectErrorStream(true).start();
        String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return new Ran(p.exitValue(), output);
    }
}
