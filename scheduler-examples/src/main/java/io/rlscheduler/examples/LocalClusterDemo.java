package io.rlscheduler.examples;

import io.lettuce.core.RedisURI;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.LogRecord;
import io.rlscheduler.master.RunComparison;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskHandle;
import io.rlscheduler.master.TaskResult;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.redis.embedded.EmbeddedRedis;
import io.rlscheduler.http.HttpApi;
import io.rlscheduler.master.Sweep;
import io.rlscheduler.master.SweepSpec;
import java.util.concurrent.CountDownLatch;
import io.rlscheduler.worker.SchedulerWorker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * A whole cluster in one process: Redis (an {@link EmbeddedRedis} started here unless
 * {@code REDIS_URL} names a server), a master and two workers with two GPU ids each, and a sweep of {@code train.py}
 * runs (three learning rates by two seeds, one GPU each). Follows one run's log live, waits for
 * all, and prints a table; the last line is {@code demo: N tasks, N succeeded, 0 failed}. Exits 0
 * only if every run succeeded. Run from the repository root (it needs {@code scripts/train.py}).
 * With {@code --serve} it also serves the HTTP API and the dashboard (port 8080, or {@code --port N}),
 * prints their address and an admin token before the runs start, and keeps serving after the last
 * line until the process is stopped.
 */
public final class LocalClusterDemo {

    private static final List<Object> LEARNING_RATES = List.of(0.05, 0.1, 0.2);
    private static final long[] SEEDS = {1, 2};

    private LocalClusterDemo() {
    }

    public static void main(String[] args) throws Exception {
        boolean serve = false;
        int port = 8080;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--serve" -> serve = true;
                case "--port" -> port = i + 1 < args.length ? Integer.parseInt(args[++i]) : -1;
                default -> port = -1;
            }
            if (port < 0 || port > 65535) {
                System.err.println("usage: demo [--serve [--port N]]   (--serve keeps the master and the dashboard running;"
                        + " port 8080 by default, 0 for any free one)");
                System.exit(2);
            }
        }
        Path root = Path.of("").toAbsolutePath();
        Path scripts = root.resolve("scripts");
        if (!Files.isRegularFile(scripts.resolve("train.py"))) {
            System.err.println("demo: scripts/train.py not found under " + root + "; run the demo from the repository root");
            System.exit(2);
        }
        int succeeded = 0;
        int total = 0;
        long started = System.nanoTime();
        String external = System.getenv("REDIS_URL");
        boolean embedded = external == null || external.isBlank();
        try (EmbeddedRedis server = embedded ? EmbeddedRedis.start() : null) {
            RedisURI redis = RedisURI.create(embedded ? server.getUrl() : external.trim());
            System.out.println("demo: Redis at " + redis + (embedded ? " (embedded)" : " (REDIS_URL)"));
            byte[] secret = new byte[32];
            new SecureRandom().nextBytes(secret);
            CoreOptions core = CoreOptions.builder().namespace("demo-" + UUID.randomUUID().toString().substring(0, 8)).build();
            try (SchedulerMaster master = SchedulerMaster.builder()
                         .redis(redis).bindHost("127.0.0.1").rpcPort(0).secret(secret)
                         .coreOptions(core).logDirectory(root.resolve("logs")).build().start();
                 SchedulerWorker w1 = worker("gpu-box-1", master, redis, secret, core, root, 0, 1);
                 SchedulerWorker w2 = worker("gpu-box-2", master, redis, secret, core, root, 2, 3);
                 HttpApi api = serve ? HttpApi.builder(master).port(port).build().start() : null) {
                String token = api == null ? null : master.apiTokens().create("demo", true).getSecret();

                SweepSpec sweepSpec = SweepSpec.of(TaskSpec.python("train.py")
                                .param("algo", "q-learning").gpus(1).owner("demo").timeout(Duration.ofMinutes(5)).build())
                        .id(core.getNamespace()).name("the demo's learning rates").grid("lr", LEARNING_RATES)
                        .seeds(SEEDS).build();
                Sweep submitted = master.submitSweep(sweepSpec);
                List<TaskHandle> runs = submitted.getRunIds().stream().map(master::task).toList();
                Map<String, String> params = new LinkedHashMap<>();
                List<Map<String, Object>> runParameters = sweepSpec.runParameters();
                for (int i = 0; i < runs.size(); i++) {
                    params.put(submitted.getRunIds().get(i), runParameters.get(i).entrySet().stream()
                            .map(e -> e.getKey() + "=" + e.getValue()).collect(Collectors.joining(" ")));
                }
                if (api != null) {
                    System.out.println("demo: the dashboard: " + api.getUrl() + "/#/sweep/" + submitted.getId());
                    System.out.println("demo: sign in with the token " + token + " (user demo, an admin)");
                }
                total = runs.size();
                System.out.println("demo: submitted " + total + " runs; following " + runs.get(0).getTaskId() + ":");
                CompletableFuture<Void> followed = new CompletableFuture<>();
                try (LogFollow follow = runs.get(0).followLogs(record -> printLog(record, followed))) {
                    List<TaskResult> results = new ArrayList<>();
                    for (TaskHandle run : runs) {
                        results.add(run.result().get(100, TimeUnit.SECONDS));
                    }
                    followed.get(10, TimeUnit.SECONDS);
                    System.out.println();
                    System.out.printf("%-40s %-18s %-10s %12s %9s %-10s %s%n",
                            "task", "parameters", "state", "final reward", "duration", "worker", "GPUs");
                    for (TaskResult r : results) {
                        long millis = r.getRecord().getUpdatedAtMillis() - r.getRecord().getCreatedAtMillis();
                        Object reward = r.getFinalMetrics().getOrDefault("final_reward", "-");
                        System.out.printf("%-40s %-18s %-10s %12s %8.1fs %-10s %s%n", r.getTaskId(), params.get(r.getTaskId()),
                                r.getState(), reward, millis / 1000.0, r.getWorkerId(), gpusOf(r));
                        if (r.isSucceeded()) {
                            succeeded++;
                        }
                    }
                    // The sweep's question: which parameters did best? (master.compare puts runs side by side.)
                    try {
                        RunComparison sweep = master.compare(runs.stream().map(TaskHandle::getTaskId).toList());
                        sweep.best("final_reward", true).ifPresent(best -> System.out.println("demo: best final reward "
                                + best.getFinalMetrics().get("final_reward") + " with " + sweep.getVaryingParameters()
                                .stream().map(p -> p + "=" + best.getParameters().get(p)).collect(Collectors.joining(" "))
                                + " (" + best.getTaskId() + "); the same in all runs: " + sweep.getCommonParameters()));
                    } catch (RuntimeException e) {
                        System.out.println("demo: cannot compare the runs: " + e.getMessage());
                    }
                    // Where the sweep's things are: one store, whichever machine ran each run.
                    try {
                        int checkpoints = 0;
                        for (TaskHandle run : runs) {
                            checkpoints += run.artifacts().list(io.rlscheduler.master.Artifact.Kind.CHECKPOINT).size();
                        }
                        System.out.println("demo: the sweep's checkpoints (" + checkpoints + " files) and ended logs are in "
                                + Path.of(master.getOptions().getArtifactStore()) + "/tasks/<task id>/; run.artifacts() lists them");
                    } catch (RuntimeException e) {
                        System.out.println("demo: cannot list the sweep's artifacts: " + e.getMessage());
                    }
                }
                System.out.printf("demo: finished in %.1f s%n", (System.nanoTime() - started) / 1e9);
                if (api != null) {
                    System.out.println("demo: serving the dashboard at " + api.getUrl() + "/#/sweep/" + submitted.getId()
                            + " until Ctrl-C (token " + token + ")");
                }
                System.out.println("demo: " + total + " tasks, " + succeeded + " succeeded, " + (total - succeeded) + " failed");
                if (api != null) {
                    new CountDownLatch(1).await(); // until the process is stopped
                }
            }
        }
        System.exit(total > 0 && succeeded == total ? 0 : 1);
    }

    private static SchedulerWorker worker(String id, SchedulerMaster master, RedisURI redis, byte[] secret,
                                          CoreOptions core, Path root, Integer... gpus) {
        return SchedulerWorker.builder()
                .masters("127.0.0.1:" + master.getRpcAddress().getPort())
                .redis(redis).workerId(id).secret(secret).coreOptions(core)
                // Each worker stands for a machine of its own: its own run root. They share only Redis
                // and the artifact store the master publishes (artifacts/, beside logs/).
                .gpuIds(gpus).cpuSlots(2).scriptRoots(root.resolve("scripts")).runRoot(root.resolve("runs").resolve(id))
                .build().start();
    }

    private static String gpusOf(TaskResult r) {
        return r.getRecord().getGpuIds().toString();
    }

    private static void printLog(LogRecord record, CompletableFuture<Void> done) {
        if (record.isEndOfStream()) {
            System.out.println("  | -- end of log: " + record.getFinalState());
            done.complete(null);
        } else if (!record.getText().startsWith("RLS_METRIC")) {
            System.out.println("  | " + record.getText());
        }
    }
}
