package io.rlscheduler.bench.harness;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.rlscheduler.http.HttpApi;
import io.rlscheduler.master.LogFollow;
import io.rlscheduler.master.SchedulerMaster;
import io.rlscheduler.master.TaskSpec;
import io.rlscheduler.worker.PythonTaskExecutor;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code http}: what the HTTP API costs against the Java API, in the same run on one cluster.
 *
 * <p><b>Submissions.</b> {@code pairs} pairs of batches of {@code tasks} no-op tasks (in-JVM
 * executor, {@code workers} workers), after two warm-up pairs, alternating the Java API
 * ({@link SchedulerMaster#submitAsync}, {@code inflight} awaiting their answer: by default as many
 * as the HTTP part has in flight) and the HTTP API ({@code POST /api/v1/runs} over loopback from
 * {@code connections} threads, each with a keep-alive connection of its own and one request in
 * flight: {@link KeepAliveClient}, a plain HTTP/1.1 client that takes little of the cores the
 * server shares with it, as a load tool would). The queue drains between batches. The value: the
 * median of the HTTP/Java ratios of submissions per second (goal ≥ 0.5).
 *
 * <p><b>Live log.</b> {@code logRounds} rounds (after one of warm-up), each two runs of a python
 * task printing {@code lines} lines as fast as it can ({@code print_lines.py}, {@code stdout}: one
 * {@code print()} per line as an unmodified script does, or block-buffered): the first
 * followed by a Java follower ({@code followLogs}), the second by an SSE follower
 * ({@code GET /api/v1/runs/{id}/log/stream}, the JDK's HTTP client), each attached as its run is
 * submitted. A rate is lines over the time from the script's first line to the follower's last;
 * the figure is the median of the rounds' SSE/Java ratios (goal ≥ 0.8). Each follower must get
 * lines 1..N in order, each once, then the end.
 *
 * <p><b>Many followers.</b> {@code followers} SSE followers of one python run that prints
 * {@code followRate} lines a second for {@code followSeconds}; each must get every line. The
 * server's CPU is the CPU time of the master's and the API's threads (names rls-http, rls-log-,
 * rls-master-, rls-events-) over the run, in cores (goal ≤ 1); the clients' threads are not counted,
 * nor the JVM's GC and JIT threads.
 */
public final class HttpBench implements EndToEndBenchmark {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Override
    public String name() {
        return "http";
    }

    @Override
    public String description() {
        return "submissions/s through the HTTP API against the Java API; live log over SSE against the Java follower;"
                + " 1,000 SSE followers of one run, server CPU";
    }

    @Override
    public List<Param> parameters() {
        return List.of(
                new Param("tasks", "5000", "tasks per submission batch"),
                new Param("pairs", "3", "Java/HTTP pairs of submission batches"),
                new Param("inflight", "64", "Java submissions awaiting their answer (as many as the HTTP part has in flight)"),
                new Param("connections", "64", "HTTP submissions in flight, one connection each"),
                new Param("workers", "4", "in-process no-op workers of the submission part"),
                new Param("lines", "200000", "lines of the live-log task"),
                new Param("stdout", "print", "how the live-log task prints, as log-stream's: print (one print() per line under"
                        + " python3 -u, as an unmodified script does) or buffered (64 KiB block-buffered writes)"),
                new Param("logRounds", "5", "measured live-log rounds, each a run followed by Java then a run followed over SSE"),
                new Param("followers", "1000", "SSE followers of the many-followers run"),
                new Param("followRate", "50", "lines/s the many-followers run prints"),
                new Param("followSeconds", "20", "seconds the many-followers run prints"),
                new Param("aof", "off", "persistence of the started Redis: off, everysec or always"),
                new Param("workDir", System.getProperty("java.io.tmpdir"), "where scripts, logs and run directories go"));
    }

    @Override
    public BenchResult run(BenchParams p) throws Exception {
        Map<String, Object> params = new LinkedHashMap<>(p.asMap());
        double submitRatio = submissions(p, params);
        Path dir = Files.createTempDirectory(Path.of(p.get("workDir")), "rls-bench-http-");
        try {
            Path scripts = Files.createDirectories(dir.resolve("scripts"));
            for (String script : List.of(LogStream.SCRIPT, "paced_lines.py")) {
                try (InputStream in = HttpBench.class.getResourceAsStream(script)) {
                    Files.copy(in, scripts.resolve(script));
                }
            }
            PythonTaskExecutor executor = PythonTaskExecutor.builder().scriptRoots(List.of(scripts))
                    .stateDirectory(dir.resolve("state")).gracePeriod(Duration.ofSeconds(1)).build();
            try (LocalCluster cluster = LocalCluster.start(new LocalCluster.Settings(1, 2, executor,
                    io.rlscheduler.master.MasterOptions.DEFAULT_DISPATCH_BATCH, p.get("aof"), dir, false));
                 HttpApi api = HttpApi.builder(cluster.master()).port(0).requestThreads(16).build().start()) {
                String token = cluster.master().apiTokens().create("bench", true).getSecret();
                liveLog(cluster.master(), api, token, dir, p, params);
                manyFollowers(cluster.master(), api, token, p, params);
            }
        } finally {
            LocalCluster.deleteTree(dir);
        }
        params.put("goal", "submissions HTTP/Java >= 0.5; SSE/Java log delivery >= 0.8, none lost; 1,000 followers <= 1 core");
        params.put("machine", Machine.describe());
        return new BenchResult(name(), "HTTP/Java submissions ratio", Stats.round3(submitRatio), "the Java API", 1.0, params);
    }

    // --- submissions

    private double submissions(BenchParams p, Map<String, Object> params) throws Exception {
        int tasks = p.getInt("tasks", 1);
        int pairs = p.getInt("pairs", 1);
        List<Double> ratios = new ArrayList<>();
        List<Double> javaRates = new ArrayList<>();
        List<Double> httpRates = new ArrayList<>();
        try (LocalCluster cluster = LocalCluster.start(new LocalCluster.Settings(p.getInt("workers", 1), 64, new NoopExecutor(),
                io.rlscheduler.master.MasterOptions.DEFAULT_DISPATCH_BATCH, p.get("aof"), Path.of(p.get("workDir")), false));
             HttpApi api = HttpApi.builder(cluster.master()).port(0).build().start()) {
            SchedulerMaster master = cluster.master();
            String token = master.apiTokens().create("bench", false).getSecret();
            // Warm-up, not measured: both paths, so the JIT has compiled them.
            for (int w = 0; w < 2; w++) {
                javaBatch(master, tasks, p.getInt("inflight", 1));
                drain(master);
                httpBatch(api, token, tasks, p.getInt("connections", 1));
                drain(master);
            }
            drain(master);
            for (int i = 0; i < pairs; i++) {
                double java = javaBatch(master, tasks, p.getInt("inflight", 1));
                drain(master);
                double http = httpBatch(api, token, tasks, p.getInt("connections", 1));
                drain(master);
                javaRates.add(Stats.round3(java));
                httpRates.add(Stats.round3(http));
                ratios.add(http / java);
                System.out.printf("# http submissions pair %d: java %.0f/s, http %.0f/s, ratio %.3f%n", i + 1, java, http, http / java);
            }
        }
        double median = median(ratios);
        params.put("submitJavaPerSecond", javaRates);
        params.put("submitHttpPerSecond", httpRates);
        params.put("submitRatios", ratios.stream().map(Stats::round3).toList());
        params.put("submitRatioMedian", Stats.round3(median));
        return median;
    }

    private static double javaBatch(SchedulerMaster master, int tasks, int inflight) throws Exception {
        Semaphore window = new Semaphore(inflight);
        CountDownLatch done = new CountDownLatch(tasks);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        long start = System.nanoTime();
        for (int i = 0; i < tasks; i++) {
            window.acquire();
            master.submitAsync(TaskSpec.python("noop.py").param("i", (long) i).build()).whenComplete((h, e) -> {
                if (e != null) {
                    failure.compareAndSet(null, e);
                }
                window.release();
                done.countDown();
            });
        }
        done.await();
        if (failure.get() != null) {
            throw new IllegalStateException("a Java submission failed", failure.get());
        }
        return tasks / ((System.nanoTime() - start) / 1e9);
    }

    private static double httpBatch(HttpApi api, String token, int tasks, int connections) throws Exception {
        AtomicInteger next = new AtomicInteger();
        AtomicReference<String> failure = new AtomicReference<>();
        long start = System.nanoTime();
        List<Thread> threads = new ArrayList<>();
        for (int c = 0; c < connections; c++) {
            Thread t = new Thread(() -> {
                try (KeepAliveClient client = new KeepAliveClient(api.getAddress(), token)) {
                    for (int i; (i = next.getAndIncrement()) < tasks && failure.get() == null; ) {
                        KeepAliveClient.Answer r = client.post("/api/v1/runs", "{\"script\":\"noop.py\",\"parameters\":{\"i\":" + i + "}}");
                        if (r.status() != 201) {
                            failure.compareAndSet(null, r.status() + " " + r.body());
                        }
                    }
                } catch (Exception e) {
                    failure.compareAndSet(null, e.toString());
                }
            }, "bench-http-client-" + c);
            t.start();
            threads.add(t);
        }
        for (Thread t : threads) {
            t.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException("an HTTP submission failed: " + failure.get());
        }
        return tasks / ((System.nanoTime() - start) / 1e9);
    }

    private static void drain(SchedulerMaster master) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(5);
        while (master.queueDepth() > 0 || master.health().getRunningTasks() + master.health().getAssignedTasks() > 0) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the queue did not drain in 5 minutes");
            }
            Thread.sleep(20); // a benchmark's pacing, not a test's synchronisation
        }
    }

    // --- live log

    private void liveLog(SchedulerMaster master, HttpApi api, String token, Path dir, BenchParams p, Map<String, Object> params)
            throws Exception {
        int lines = p.getInt("lines", 1);
        int rounds = p.getInt("logRounds", 1);
        String mode = p.get("stdout");
        if (!mode.equals("buffered") && !mode.equals("print")) {
            throw new IllegalArgumentException("http: stdout must be buffered or print, was '" + mode + "'");
        }
        List<Double> javaRates = new ArrayList<>();
        List<Double> sseRates = new ArrayList<>();
        List<Double> ratios = new ArrayList<>();
        logRun(master, api, token, dir, lines, mode, false); // warm-up, not measured: both paths compiled
        logRun(master, api, token, dir, lines, mode, true);
        for (int round = 0; round < rounds; round++) {
            double java = logRun(master, api, token, dir, lines, mode, false);
            double sse = logRun(master, api, token, dir, lines, mode, true);
            javaRates.add((double) Math.round(java));
            sseRates.add((double) Math.round(sse));
            ratios.add(sse / java);
            System.out.printf("# http live log round %d: java %.0f lines/s, sse %.0f lines/s, ratio %.3f%n", round + 1, java, sse,
                    sse / java);
        }
        params.put("logJavaLinesPerSecond", javaRates);
        params.put("logSseLinesPerSecond", sseRates);
        params.put("logSseJavaRatios", ratios.stream().map(Stats::round3).toList());
        params.put("logSseJavaRatioMedian", Stats.round3(median(ratios)));
        params.put("logLinesLost", 0);
    }

    /**
     * One run of the live-log task with one follower, the Java API's or the SSE stream's, attached as
     * it is submitted: lines per second from the script's first line to the follower's last. Fails
     * if the follower missed, repeated or reordered a line.
     */
    private double logRun(SchedulerMaster master, HttpApi api, String token, Path dir, int lines, String mode, boolean sse)
            throws Exception {
        String taskId = "http-log-" + (sse ? "sse-" : "java-") + System.nanoTime();
        Path stamps = dir.resolve("stamps-" + taskId + ".json");
        AtomicLong last = new AtomicLong();
        AtomicLong expected = new AtomicLong(1);
        AtomicReference<String> problem = new AtomicReference<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        master.submit(TaskSpec.python(LogStream.SCRIPT).taskId(taskId).param("lines", (long) lines).param("length", 80L)
                .param("stamps", stamps.toString()).param("mode", mode).build());
        java.util.function.LongConsumer line = seq -> {
            if (seq != expected.get() && problem.get() == null) {
                problem.set("line " + seq + " came where " + expected.get() + " was due");
            }
            expected.set(seq + 1);
            last.set(System.currentTimeMillis());
        };
        LogFollow follow = null;
        if (sse) {
            HttpClient.newHttpClient().sendAsync(HttpRequest.newBuilder(URI.create(api.getUrl() + "/api/v1/runs/" + taskId
                    + "/log/stream")).header("Authorization", "Bearer " + token).build(),
                    HttpResponse.BodyHandlers.fromLineSubscriber(new LineCounter(text -> {
                        if (text.startsWith("id: ")) {
                            line.accept(Long.parseLong(text.substring(text.indexOf(':', 4) + 1)));
                        } else if (text.equals("event: end")) {
                            done.complete(null);
                        }
                    }, () -> done.complete(null))));
        } else {
            follow = master.task(taskId).followLogs(r -> {
                if (r.isLine()) {
                    line.accept(r.getSequence());
                } else {
                    done.complete(null);
                }
            });
        }
        done.get(10, TimeUnit.MINUTES);
        if (follow != null) {
            follow.close();
        }
        if (expected.get() != lines + 1 || problem.get() != null) {
            throw new IllegalStateException("http live log: the " + (sse ? "SSE" : "Java") + " follower got lines up to "
                    + (expected.get() - 1) + " of " + lines + (problem.get() == null ? "" : "; " + problem.get()));
        }
        double start = JSON.readTree(Files.readString(stamps)).path("start").asDouble();
        return lines / (last.get() / 1e3 - start);
    }

    // --- many followers

    private void manyFollowers(SchedulerMaster master, HttpApi api, String token, BenchParams p, Map<String, Object> params)
            throws Exception {
        int followers = p.getInt("followers", 1);
        int rate = p.getInt("followRate", 1);
        int seconds = p.getInt("followSeconds", 1);
        long lines = (long) rate * seconds;
        String taskId = "http-many-" + System.nanoTime();
        master.submit(TaskSpec.python("paced_lines.py").taskId(taskId).param("rate", (long) rate).param("seconds", (long) seconds)
                .build());
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        List<AtomicLong> counts = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch ended = new CountDownLatch(followers);
        Map<String, Long> before = serverCpu();
        long wallStart = System.nanoTime();
        for (int i = 0; i < followers; i++) {
            AtomicLong count = new AtomicLong();
            counts.add(count);
            client.sendAsync(HttpRequest.newBuilder(URI.create(api.getUrl() + "/api/v1/runs/" + taskId + "/log/stream"))
                    .header("Authorization", "Bearer " + token).build(), HttpResponse.BodyHandlers.fromLineSubscriber(
                    new LineCounter(line -> {
                        if (line.startsWith("event: line")) {
                            count.incrementAndGet();
                        }
                    }, ended::countDown)));
        }
        if (!ended.await(seconds + 300L, TimeUnit.SECONDS)) {
            throw new IllegalStateException("http many followers: " + ended.getCount() + " of " + followers + " did not end");
        }
        double wall = (System.nanoTime() - wallStart) / 1e9;
        Map<String, Long> after = serverCpu();
        long cpuNanos = 0;
        for (Map.Entry<String, Long> e : after.entrySet()) {
            cpuNanos += e.getValue() - before.getOrDefault(e.getKey(), 0L);
        }
        long complete = counts.stream().filter(c -> c.get() == lines).count();
        if (complete != followers) {
            throw new IllegalStateException("http many followers: " + (followers - complete) + " of " + followers
                    + " did not get all " + lines + " lines");
        }
        double cores = cpuNanos / 1e9 / wall;
        params.put("followersServerCores", Stats.round3(cores));
        params.put("followersAllLines", followers);
        params.put("followersWallSeconds", Stats.round3(wall));
        System.out.printf("# http %d followers of %d lines: server %.3f cores over %.1f s%n", followers, lines, cores, wall);
    }

    /** CPU nanoseconds so far of the master's and the API's threads, by thread id. */
    private static Map<String, Long> serverCpu() {
        ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        Map<String, Long> cpu = new HashMap<>();
        for (ThreadInfo info : bean.getThreadInfo(bean.getAllThreadIds())) {
            if (info == null) {
                continue;
            }
            String name = info.getThreadName();
            if (name.startsWith("rls-http") || name.startsWith("rls-log-") || name.startsWith("rls-master-")
                    || name.startsWith("rls-events-")) {
                long t = bean.getThreadCpuTime(info.getThreadId());
                if (t > 0) {
                    cpu.put(info.getThreadId() + ":" + name, t);
                }
            }
        }
        return cpu;
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    /** A line subscriber that hands each line on and says when the stream ends, however it ends. */
    private static final class LineCounter implements Flow.Subscriber<String> {
        private final java.util.function.Consumer<String> onLine;
        private final Runnable onEnd;

        LineCounter(java.util.function.Consumer<String> onLine, Runnable onEnd) {
            this.onLine = onLine;
            this.onEnd = onEnd;
        }

        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            subscription.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(String line) {
            onLine.accept(line);
        }

        @Override
        public void onError(Throwable throwable) {
            onEnd.run();
        }

        @Override
        public void onComplete() {
            onEnd.run();
        }
    }
}
