package io.rlscheduler.http;

import io.rlscheduler.core.CoreOptions;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.testkit.RedisNamespace;
import io.rlscheduler.testkit.TestRedis;
import io.rlscheduler.worker.SchedulerWorker;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A lab for the HTTP API's tests, all real: a Redis server (or the one {@code REDIS_URL} names, in
 * a namespace of its own), a master with its HTTP API on a free loopback port, and workers that
 * stand for separate machines, each with its own run root and state directory. Scripts are
 * written into one script root per worker (each machine has its own checkout). The artifact store
 * is a directory of the lab's. Close it to stop everything.
 */
public final class HttpLab implements AutoCloseable {

    private static final byte[] SECRET = "http-lab-shared-secret-for-tests".getBytes(StandardCharsets.UTF_8);

    private final Path dir;
    private final TestRedis redis;
    private final CoreOptions options;
    private final SchedulerMaster master;
    private final HttpApi api;
    private final List<SchedulerWorker> workers = new ArrayList<>();
    private final List<Path> scriptRoots = new ArrayList<>();
    private final String adminToken;

    private final List<AutoCloseable> standbys = new ArrayList<>();

    private HttpLab(Path dir, int workerCount, int gpusPerWorker, java.util.function.Consumer<HttpApi.Builder> configure,
                    java.util.function.BiConsumer<Integer, SchedulerWorker.Builder> configureWorker) throws IOException {
        this.dir = dir;
        this.redis = TestRedis.start();
        this.options = CoreOptions.builder().namespace(RedisNamespace.random().name()).heartbeatInterval(Duration.ofMillis(500))
                .build();
        this.master = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                .coreOptions(options).logDirectory(dir.resolve("master").resolve("logs"))
                .artifactStore(dir.resolve("store").toString()).gpuReadingInterval(Duration.ofMillis(200)).build().start();
        HttpApi.Builder apiBuilder = HttpApi.builder(master).port(0);
        configure.accept(apiBuilder);
        this.api = apiBuilder.build().start();
        this.adminToken = master.apiTokens().create("admin", true).getSecret();
        int gpu = 0;
        for (int i = 1; i <= workerCount; i++) {
            Path machine = dir.resolve("machine-" + i);
            Path scripts = Files.createDirectories(machine.resolve("scripts"));
            scriptRoots.add(scripts);
            List<Integer> gpus = new ArrayList<>();
            for (int g = 0; g < gpusPerWorker; g++) {
                gpus.add(gpu++);
            }
            SchedulerWorker.Builder worker = SchedulerWorker.builder().masters("127.0.0.1:" + master.getRpcAddress().getPort())
                    .redis(redis.getUri()).workerId("machine-" + i).secret(SECRET).coreOptions(options)
                    .gpuIds(gpus).cpuSlots(4).scriptRoots(scripts)
                    .runRoot(machine.resolve("runs")).stateDirectory(machine.resolve("state"));
            configureWorker.accept(i, worker);
            workers.add(worker.build().start());
        }
    }

    /**
     * Starts a lab.
     *
     * @param dir           a fresh directory for the lab's files
     * @param workers       how many workers (machines)
     * @param gpusPerWorker GPU ids each worker has (ids are unique across the lab)
     */
    public static HttpLab start(Path dir, int workers, int gpusPerWorker) {
        return start(dir, workers, gpusPerWorker, b -> { });
    }

    /** Starts a lab whose HTTP API is configured by {@code configure} as well (TLS, anonymous reads, ...). */
    public static HttpLab start(Path dir, int workers, int gpusPerWorker, java.util.function.Consumer<HttpApi.Builder> configure) {
        return start(dir, workers, gpusPerWorker, configure, (i, w) -> { });
    }

    /**
     * Starts a lab whose workers are configured by {@code configureWorker} as well, given each
     * worker's number (1 for {@code machine-1}) and builder.
     */
    public static HttpLab start(Path dir, int workers, int gpusPerWorker, java.util.function.Consumer<HttpApi.Builder> configure,
                                java.util.function.BiConsumer<Integer, SchedulerWorker.Builder> configureWorker) {
        try {
            return new HttpLab(dir, workers, gpusPerWorker, configure, configureWorker);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Returns the API's base URL, {@code http://127.0.0.1:PORT}. */
    public String url() {
        return api.getUrl();
    }

    /** Returns an admin token (user {@code admin}). */
    public String adminToken() {
        return adminToken;
    }

    /** Makes a new token for {@code user}, not an admin's. */
    public String token(String user) {
        return master.apiTokens().create(user, false).getSecret();
    }

    /** Writes a script into every worker's script root. */
    public void writeScript(String name, String pythonSource) {
        try {
            for (Path root : scriptRoots) {
                Path file = root.resolve(name);
                Files.createDirectories(file.getParent());
                Files.writeString(file, pythonSource);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Returns a directory of the lab's for the test's own files (gates for scripts, downloads). */
    public Path dir() {
        return dir;
    }

    /**
     * Starts a second master that never leads (an API-only standby, as a host application on
     * another machine would run), with an HTTP API of its own on a free loopback port, and returns
     * that API's base URL. Both close with the lab.
     */
    public String standbyUrl() {
        SchedulerMaster standby = SchedulerMaster.builder().redis(redis.getUri()).bindHost("127.0.0.1").rpcPort(0).secret(SECRET)
                .coreOptions(options).standbyOnly(true).masterId("standby-" + standbys.size())
                .logDirectory(dir.resolve("standby-" + standbys.size()).resolve("logs"))
                .artifactStore(dir.resolve("store").toString()).build().start();
        HttpApi standbyApi = HttpApi.builder(standby).port(0).build().start();
        standbys.add(standby);
        standbys.add(standbyApi);
        return standbyApi.getUrl();
    }

    public SchedulerMaster master() {
        return master;
    }

    public HttpApi api() {
        return api;
    }

    public TestRedis redis() {
        return redis;
    }

    public List<SchedulerWorker> workers() {
        return workers;
    }

    @Override
    public void close() {
        workers.forEach(SchedulerWorker::close);
        for (int i = standbys.size() - 1; i >= 0; i--) {
            try {
                standbys.get(i).close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        api.close();
        master.close();
        redis.close();
    }
}
