package io.rlscheduler.examples;

import io.lettuce.core.RedisURI;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.redis.embedded.EmbeddedRedis;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * Runs a master as its own process until it is stopped (Ctrl-C / SIGTERM).
 *
 * <pre>
 *  setting        argument      environment    default
 *  Redis URL      --redis       RLS_REDIS      redis://localhost:6379 (or REDIS_URL); "embedded" starts
 *                                              a redis-server in this process (below)
 *  RPC port       --port        RLS_PORT       9000
 *  bind address   --bind        RLS_BIND       0.0.0.0
 *  shared secret  --secret      RLS_SECRET     required, at least 16 characters
 *  namespace      --namespace   RLS_NAMESPACE  rls
 *  log directory  --log-dir     RLS_LOG_DIR    logs
 *  leases (ms)    --heartbeat-ms, --liveness-ms, --task-lease-ms, --ack-timeout-ms,
 *                 --leader-lease-ms, --reap-interval-ms   (RLS_HEARTBEAT_MS, ...)  10000/30000/120000/30000/10000/500
 *  with --redis embedded (an {@link EmbeddedRedis} on 127.0.0.1, for workers on this machine):
 *  Redis port     --redis-port  RLS_REDIS_PORT 6379
 *  Redis data     --redis-dir   RLS_REDIS_DIR  redis-data (kept, so a restart finds the queue again)
 * </pre>
 */
public final class MasterMain {

    /** The value of {@code --redis} that starts an embedded redis-server. */
    static final String EMBEDDED = "embedded";

    private MasterMain() {
    }

    public static void main(String[] argv) throws InterruptedException {
        Settings s = new Settings(argv);
        String redisSetting = s.get("redis", System.getenv().getOrDefault("REDIS_URL", "redis://localhost:6379"));
        EmbeddedRedis embedded = null;
        if (redisSetting.equals(EMBEDDED)) {
            // Closed after the master, by the shutdown hook below, not by a hook of its own.
            embedded = EmbeddedRedis.builder().port(Integer.parseInt(s.get("redis-port", "6379")))
                    .dataDirectory(Path.of(s.get("redis-dir", "redis-data"))).stopOnExit(false).start();
            System.out.println("redis-server embedded at " + embedded.getUrl() + ", data in " + embedded.getDataDirectory());
            redisSetting = embedded.getUrl();
        }
        SchedulerMaster master;
        try {
            master = SchedulerMaster.builder()
                    .redis(RedisURI.create(redisSetting))
                    .rpcPort(Integer.parseInt(s.get("port", "9000")))
                    .bindHost(s.get("bind", "0.0.0.0"))
                    .secret(s.require("secret"))
                    .coreOptions(s.coreOptions())
                    .logDirectory(Path.of(s.get("log-dir", "logs")))
                    .leaderLease(s.millis("leader-lease-ms", io.rlscheduler.master.MasterOptions.DEFAULT_LEADER_LEASE))
                    .reapInterval(s.millis("reap-interval-ms", io.rlscheduler.master.MasterOptions.DEFAULT_REAP_INTERVAL))
                    .build()
                    .start();
        } catch (RuntimeException e) {
            if (embedded != null) {
                embedded.close();
            }
            throw e;
        }
        System.out.println("master " + master.getMasterId() + " ready at " + master.getRpcAddress().getHostString()
                + ":" + master.getRpcAddress().getPort() + (master.isLeader() ? " (leader)" : " (standby)"));
        EmbeddedRedis redis = embedded;
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            master.close();
            if (redis != null) {
                redis.close();
            }
            stopped.countDown();
        }, "master-shutdown"));
        stopped.await();
    }
}
