package io.rlscheduler.examples;

import io.lettuce.core.RedisURI;
import io.rlscheduler.core.CoreOptions;
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
                .coreOptions(CoreOptions.builder().namespace(s.get("namespace", CoreOptions.DEFAULT_NAMESPACE)).build())
                .logDirectory(Path.of(s.get("log-dir", "logs")))
                .build()
                .start();
        System.out.println("master " + master.getMasterId() + " listening on " + master.getRpcAddress());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            master.close();
            stopped.countDown();
        }, "master-shutdown"));
        stopped.await();
    }
}
