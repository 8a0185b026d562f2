package io.rlscheduler.bench.harness;

import com.sun.management.GarbageCollectionNotificationInfo;
import com.sun.management.GcInfo;
import io.lettuce.core.RedisURI;
import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.protocol.NettyTransport;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import javax.management.NotificationEmitter;
import javax.management.openmbean.CompositeData;

/**
 * The main class of the master JVM that {@link MasterProcess} starts: one real
 * {@link SchedulerMaster} (default settings but the lease settings, the namespace and the backstop
 * dispatch interval given), bound to 127.0.0.1 on a free port, in a JVM of its own so that its CPU
 * and heap are measured apart from the simulated workers. Not for use on its own.
 *
 * <p>Arguments: {@code --redis URL --namespace NS --heartbeat-ms N --liveness-ms N --log-dir DIR
 * --dispatch-interval-ms N --sample-ms N}; the shared secret, hex-encoded, in the environment
 * variable {@value #SECRET_ENV} (not on the command line, where {@code ps} would show it).
 *
 * <p>Writes to stdout, each line starting with {@value #PREFIX}:
 * <pre>
 * rls-bench-master ready port=P id=ID transport=epoll max_heap=B gc=G1 Young Generation,G1 Old Generation
 * rls-bench-master sample at=MS used=B committed=B peak=B after_gc=B gcs=N gc_ms=N
 * </pre>
 * one {@code sample} line every {@code --sample-ms}: {@code at} is the wall clock (ms since the
 * epoch), {@code used} and {@code committed} the heap at that moment, {@code peak} the most heap
 * used since the previous sample (the larger of {@code used} and every heap size just before a
 * garbage collection in between, so no peak between two samples is missed), {@code after_gc} the
 * largest heap size just after a collection in between (0 if none ran), {@code gcs} and
 * {@code gc_ms} the collections and their accumulated time since the JVM started. Stops on
 * SIGTERM (the master shuts down in a shutdown hook).
 */
public final class MasterProcessMain {

    /** The start of every line the bench reads. */
    static final String PREFIX = "rls-bench-master ";

    /** The environment variable holding the shared secret, hex-encoded. */
    static final String SECRET_ENV = "RLS_BENCH_SECRET";

    private static final AtomicLong peakSinceSample = new AtomicLong();
    private static final AtomicLong afterGcSinceSample = new AtomicLong();

    private MasterProcessMain() {
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            a.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
        }
        String secretHex = System.getenv(SECRET_ENV);
        if (secretHex == null) {
            throw new IllegalArgumentException(SECRET_ENV + " is not set");
        }
        CoreOptions core = CoreOptions.builder().namespace(required(a, "namespace"))
                .heartbeatInterval(Duration.ofMillis(Long.parseLong(required(a, "heartbeat-ms"))))
                .livenessLease(Duration.ofMillis(Long.parseLong(required(a, "liveness-ms"))))
                .build();
        watchGarbageCollections();
        SchedulerMaster master = SchedulerMaster.builder()
                .redis(RedisURI.create(required(a, "redis"))).bindHost("127.0.0.1").rpcPort(0)
                .secret(HexFormat.of().parseHex(secretHex)).coreOptions(core)
                .logDirectory(Path.of(required(a, "log-dir")))
                .dispatchInterval(Duration.ofMillis(Long.parseLong(required(a, "dispatch-interval-ms"))))
                .build().start();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            master.close();
            stopped.countDown();
        }, "master-shutdown"));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!master.isLeader()) {
            if (System.nanoTime() > deadline) {
                System.out.println(PREFIX + "failed: not the leader after 30 s");
                System.exit(1);
            }
            Thread.sleep(20); // start-up polling
        }
        String gcs = ManagementFactory.getGarbageCollectorMXBeans().stream().map(GarbageCollectorMXBean::getName)
                .collect(Collectors.joining(","));
        System.out.println(PREFIX + "ready port=" + master.getRpcAddress().getPort() + " id=" + master.getMasterId()
                + " transport=" + NettyTransport.best() + " max_heap=" + Runtime.getRuntime().maxMemory() + " gc=" + gcs);
        long sampleMillis = Long.parseLong(required(a, "sample-ms"));
        ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "bench-heap-sampler");
            t.setDaemon(true);
            return t;
        });
        sampler.scheduleAtFixedRate(MasterProcessMain::printSample, 0, sampleMillis, TimeUnit.MILLISECONDS);
        stopped.await();
    }

    private static String required(Map<String, String> a, String key) {
        String v = a.get(key);
        if (v == null) {
            throw new IllegalArgumentException("missing --" + key);
        }
        return v;
    }

    private static void printSample() {
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        long peak = Math.max(heap.getUsed(), peakSinceSample.getAndSet(0));
        long afterGc = afterGcSinceSample.getAndSet(0);
        long gcs = 0;
        long gcMillis = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            gcs += Math.max(0, gc.getCollectionCount());
            gcMillis += Math.max(0, gc.getCollectionTime());
        }
        System.out.println(String.format(Locale.ROOT, "%ssample at=%d used=%d committed=%d peak=%d after_gc=%d gcs=%d gc_ms=%d",
                PREFIX, System.currentTimeMillis(), heap.getUsed(), heap.getCommitted(), peak, afterGc, gcs, gcMillis));
    }

    /**
     * Records, for every garbage collection, the heap used just before it (a peak) and just after
     * it, summed over the heap's memory pools.
     */
    private static void watchGarbageCollections() {
        Set<String> heapPools = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP).map(MemoryPoolMXBean::getName).collect(Collectors.toSet());
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            if (!(gc instanceof NotificationEmitter emitter)) {
                continue;
            }
            emitter.addNotificationListener((notification, handback) -> {
                if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(notification.getType())) {
                    return;
                }
                GcInfo info = GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData()).getGcInfo();
                long before = sum(info.getMemoryUsageBeforeGc(), heapPools);
                long after = sum(info.getMemoryUsageAfterGc(), heapPools);
                peakSinceSample.accumulateAndGet(before, Math::max);
                afterGcSinceSample.accumulateAndGet(after, Math::max);
            }, null, null);
        }
    }

    private static long sum(Map<String, MemoryUsage> usage, Set<String> pools) {
        long total = 0;
        for (Map.Entry<String, MemoryUsage> e : usage.entrySet()) {
            if (pools.contains(e.getKey())) {
                total += e.getValue().getUsed();
            }
        }
        return total;
    }
}
