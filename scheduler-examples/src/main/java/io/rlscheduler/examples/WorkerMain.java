package io.rlscheduler.examples;

import io.lettuce.core.RedisURI;
import io.rlscheduler.worker.SchedulerWorker;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * Runs a worker as its own process until it is stopped (Ctrl-C / SIGTERM stops its tasks first).
 *
 * <pre>
 *  setting        argument      environment     default
 *  masters        --masters     RLS_MASTERS     localhost:9000 (comma-separated host:port list)
 *  Redis URL      --redis       RLS_REDIS       redis://localhost:6379 (or REDIS_URL)
 *  worker id      --worker-id   RLS_WORKER_ID   the host name
 *  shared secret  --secret      RLS_SECRET      required, at least 16 characters
 *  GPU ids        --gpus        RLS_GPUS        detected with nvidia-smi ("" for none; e.g. "0,1")
 *  CPU slots      --cpu-slots   RLS_CPU_SLOTS   number of processors
 *  script root    --scripts     RLS_SCRIPTS     scripts
 *  run root       --runs        RLS_RUNS        runs
 *  artifact store --store       RLS_STORE       the one the masters publish (file:/srv/runs, s3://bucket/prefix)
 *  namespace      --namespace   RLS_NAMESPACE   rls
 *  leases (ms)    --heartbeat-ms, --liveness-ms, --task-lease-ms, --ack-timeout-ms (RLS_HEARTBEAT_MS, ...)
 *                 10000/30000/120000/30000; must equal the masters'
 *  kill grace     --kill-grace-ms  RLS_KILL_GRACE_MS  10000
 * </pre>
 */
public final class WorkerMain {

    private WorkerMain() {
    }

    public static void main(String[] argv) throws InterruptedException {
        Settings s = new Settings(argv);
        String redis = s.get("redis", System.getenv().getOrDefault("REDIS_URL", "redis://localhost:6379"));
        SchedulerWorker.Builder builder = SchedulerWorker.builder()
                .masters(s.get("masters", "localhost:9000").split(","))
                .redis(RedisURI.create(redis))
                .workerId(s.get("worker-id", hostName()))
                .secret(s.require("secret"))
                .cpuSlots(Integer.parseInt(s.get("cpu-slots", String.valueOf(Runtime.getRuntime().availableProcessors()))))
                .scriptRoots(Path.of(s.get("scripts", "scripts")))
                .runRoot(Path.of(s.get("runs", "runs")))
                .killGrace(s.millis("kill-grace-ms", io.rlscheduler.worker.WorkerOptions.DEFAULT_KILL_GRACE))
                .coreOptions(s.coreOptions());
        String store = s.get("store", null);
        if (store != null) {
            builder.artifacts(io.rlscheduler.worker.ArtifactOptions.builder().store(store).build());
        }
        String gpus = s.get("gpus", null);
        if (gpus != null) {
            List<Integer> ids = new ArrayList<>();
            for (String id : gpus.split(",")) {
                if (!id.isBlank()) {
                    ids.add(Integer.parseInt(id.trim()));
                }
            }
            builder.gpuIds(ids);
        }
        SchedulerWorker worker = builder.build().start();
        System.out.println("worker " + worker.getWorkerId() + " started, session " + worker.getSessionId());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            worker.close();
            stopped.countDown();
        }, "worker-shutdown"));
        stopped.await();
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName().replaceAll("[^A-Za-z0-9._-]", "-");
        } catch (UnknownHostException e) {
            return "worker";
        }
    }
}
