package io.rlscheduler.bench.harness;

import io.lettuce.core.RedisURI;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.worker.ArtifactOptions;
import io.rlscheduler.worker.SchedulerWorker;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * A worker in a JVM of its own, for the benchmarks that kill one ({@link Failover}): a
 * {@link SchedulerWorker} with its default {@link io.rlscheduler.worker.PythonTaskExecutor}
 * (launcher, keepalives), no GPUs, running until the process is killed or terminated.
 *
 * <pre>
 * java -cp benchmarks.jar io.rlscheduler.bench.harness.BenchWorkerMain --masters HOST:PORT --redis URI
 *     --worker-id ID --namespace NS --heartbeat-ms N --liveness-ms N --task-lease-ms N --ack-timeout-ms N
 *     --kill-grace-ms N --scripts DIR --runs DIR [--cpu-slots N] [--store URI]
 * </pre>
 *
 * With {@code --store} the worker commits its attempts' checkpoints to that artifact store and
 * restores them from it (its other artifact settings at their defaults).
 *
 * The shared secret comes from the environment variable {@value #SECRET_ENV}, not the command
 * line. Prints {@code bench worker <id> started, session <session>} once registered.
 */
public final class BenchWorkerMain {

    /** Environment variable holding the shared secret. */
    public static final String SECRET_ENV = "RLS_BENCH_SECRET";
    /** The line printed once the worker has registered (its prefix). */
    public static final String STARTED = "started, session";

    private BenchWorkerMain() {
    }

    public static void main(String[] argv) throws InterruptedException {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            if (!argv[i].startsWith("--")) {
                throw new IllegalArgumentException("expected --name value pairs, got '" + argv[i] + "'");
            }
            a.put(argv[i].substring(2), argv[i + 1]);
        }
        String secret = System.getenv(SECRET_ENV);
        if (secret == null) {
            throw new IllegalStateException(SECRET_ENV + " is not set");
        }
        CoreOptions core = CoreOptions.builder().namespace(require(a, "namespace"))
                .heartbeatInterval(millis(a, "heartbeat-ms")).livenessLease(millis(a, "liveness-ms"))
                .taskLease(millis(a, "task-lease-ms")).ackTimeout(millis(a, "ack-timeout-ms")).build();
        SchedulerWorker worker = SchedulerWorker.builder()
                .masters(require(a, "masters").split(","))
                .redis(RedisURI.create(require(a, "redis")))
                .workerId(require(a, "worker-id"))
                .secret(secret)
                .coreOptions(core)
                .gpuIds(List.of())
                .cpuSlots(Integer.parseInt(a.getOrDefault("cpu-slots", "1")))
                .memoryBytes(1L << 30)
                .scriptRoots(Path.of(require(a, "scripts")))
                .runRoot(Path.of(require(a, "runs")))
                .killGrace(millis(a, "kill-grace-ms"))
                .artifacts(a.containsKey("store") ? ArtifactOptions.builder().store(a.get("store")).build()
                        : ArtifactOptions.defaults())
                .build().start();
        System.out.println("bench worker " + worker.getWorkerId() + " " + STARTED + " " + worker.getSessionId());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            worker.close();
            stopped.countDown();
        }, "bench-worker-shutdown"));
        stopped.await();
    }

    private static String require(Map<String, String> a, String name) {
        String v = a.get(name);
        if (v == null) {
            throw new IllegalArgumentException("--" + name + " is required");
        }
        return v;
    }

    private static Duration millis(Map<String, String> a, String name) {
        return Duration.ofMillis(Long.parseLong(require(a, name)));
    }
}
