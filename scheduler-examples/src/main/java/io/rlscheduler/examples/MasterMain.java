package io.rlscheduler.examples;

import io.lettuce.core.RedisURI;
import io.rlscheduler.master.SchedulerMaster;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * Runs a master as its own process until it is stopped (Ctrl-C / SIGTERM).
 *
 * <pre>
 *  setting        argument      environment    default
 *  Redis URL      --redis       RLS_REDIS      redis://localhost:6379 (or REDIS_URL)
 *  RPC port       --port        RLS_PORT       9000
 *  bind address   --bind        RLS_BIND       0.0.0.0
 *  shared secret  --secret      RLS_SECRET     required, at least 16 characters
 *  namespace      --namespace   RLS_NAMESPACE  rls
 *  log directory  --log-dir     RLS_LOG_DIR    logs
 *  leases (ms)    --heartbeat-ms, --liveness-ms, --task-lease-ms, --ack-timeout-ms,
 *                 --leader-lease-ms, --reap-interval-ms   (RLS_HEARTBEAT_MS, ...)  10000/30000/120000/30000/10000/500
 * </pre>
 */
public final class MasterMain {

    private MasterMain() {
    }

    public static void main(String[] argv) throws InterruptedException {
        Settings s = new Settings(argv);
        String redis = s.get("redis", System.getenv().getOrDefault("REDIS_URL", "redis://localhost:6379"));
        SchedulerMaster master = SchedulerMaster.builder()
                .redis(RedisURI.create(redis))
                .rpcPort(Integer.parseInt(s.get("port", "9000")))
                .bindHost(s.get("bind", "0.0.0.0"))
                .secret(s.require("secret"))
                .coreOptions(s.coreOptions())
                .logDirectory(Path.of(s.get("log-dir", "logs")))
                .leaderLease(s.millis("leader-lease-ms", io.rlscheduler.master.MasterOptions.DEFAULT_LEADER_LEASE))
                .reapInterval(s.millis("reap-interval-ms", io.rlscheduler.master.MasterOptions.DEFAULT_REAP_INTERVAL))
                .build()
                .start();
        System.out.println("master " + master.getMasterId() + " ready at " + master.getRpcAddress().getHostString()
                + ":" + master.getRpcAddress().getPort() + (master.isLeader() ? " (leader)" : " (standby)"));
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            master.close();
            stopped.countDown();
        }, "master-shutdown"));
        stopped.await();
    }
}
