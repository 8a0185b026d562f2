package io.rlscheduler.bench.harness;

import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.DirectoryStore;
import io.rlscheduler.store.StoredObject;
import io.rlscheduler.store.s3.S3Store;
import io.rlscheduler.store.s3.S3StoreOptions;
import io.rlscheduler.worker.ArtifactOptions;
import io.rlscheduler.worker.internal.artifacts.ArtifactTransfers;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code checkpoint-directory} and {@code checkpoint-s3}: the commit throughput of one checkpoint
 * (default 1 GiB in 8 files of random bytes) into the store, through the worker's real commit
 * path ({@link CommitPath}: snapshot by hard links, files sent {@code transferThreads} at once,
 * manifest, the fenced pointer move in Redis), against the same files copied the plain way in the
 * same run: {@code cp -r} into the same file system (directory store), or the AWS SDK's transfer
 * manager uploading the 8 files at once ({@link TransferManagerUploads}; S3 store, both against
 * s3proxy's filesystem backend in this JVM, {@link InJvmS3}). GiB/s, higher is better.
 *
 * <p>The files are written once and forced to disk before anything is measured; every variant
 * reads them from a warm page cache. Rounds alternate the variants (their order rotated each
 * round, so drift in the machine's load falls on all); before each run {@code sync -f} flushes
 * the file system, and after it what the run wrote is deleted, both outside the measurement. The
 * figures are the medians of the measured rounds, after {@code warmup} unmeasured ones.
 *
 * <p>The directory store's runs also time {@code cp -r} followed by {@code sync} of the copied
 * files, the baseline made as durable as the store (its ratio is {@code ratio_to_cp_r_sync}).
 * With {@code profile=true} further variants show where the time goes: the store's puts alone
 * (without snapshot, manifest and Redis), for the directory store also without forcing to disk,
 * the SHA-256 of the files alone, and the snapshot's hard links. They run on their own,
 * not by default: a durable write right after another variant's writes and deletions is slower on
 * a busy disk, so between ours and the baseline they would lower the headline figure. Each run
 * also records its CPU time per GiB, and the last round the CPU by thread group of this JVM (the S3
 * server's threads included) and of redis-server.
 */
public final class CheckpointThroughput implements EndToEndBenchmark {

    /** Which store a benchmark commits into. */
    enum Kind { DIRECTORY, S3 }

    private static final double GIB = 1L << 30;

    private final Kind kind;

    CheckpointThroughput(Kind kind) {
        this.kind = kind;
    }

    @Override
    public String name() {
        return "checkpoint-" + kind.name().toLowerCase(Locale.ROOT);
    }

    @Override
    public String description() {
        return kind == Kind.DIRECTORY
                ? "checkpoint commit into the directory store, GiB/s; baseline cp -r of the same files"
                : "checkpoint commit into the S3 store (s3proxy in this JVM), GiB/s; baseline the AWS SDK's transfer manager";
    }

    @Override
    public List<Param> parameters() {
        List<Param> p = new ArrayList<>(List.of(
                new Param("sizeMiB", "1024", "the checkpoint's size, MiB"),
                new Param("files", "8", "files it has (of equal size)"),
                new Param("rounds", "3", "measured rounds (each runs every variant once)"),
                new Param("warmup", "1", "unmeasured rounds before them"),
                new Param("transferThreads", Integer.toString(ArtifactOptions.DEFAULT_TRANSFER_THREADS),
                        "files the worker sends at once (its transferThreads)"),
                new Param("profile", "false", "also run the variants that show where the time goes (their writes"
                        + " and deletions slow what follows them: a run of its own)")));
        if (kind == Kind.DIRECTORY) {
            p.add(new Param("fsync", "true", "whether the directory store forces each object to disk (its default)"));
        } else {
            p.add(new Param("partSizeMiB", Long.toString(S3StoreOptions.DEFAULT_PART_SIZE >> 20),
                    "part size of both (the S3 store's part-size)"));
            p.add(new Param("thresholdMiB", Long.toString(S3StoreOptions.DEFAULT_MULTIPART_THRESHOLD >> 20),
                    "size above which both send a file in parts"));
            p.add(new Param("parallelism", Integer.toString(S3StoreOptions.DEFAULT_PARALLELISM),
                    "the S3 store's part transfers per file"));
        }
        p.add(new Param("workDir", System.getProperty("java.io.tmpdir"),
                "where the files, the store and the copies go (deleted after)"));
        return p;
    }

    /**
     * One way of moving the files: run {@code n} returns its wall time and the CPU time of any
     * process it ran (this JVM's own CPU time is added by the caller); {@code after} undoes it,
     * unmeasured.
     */
    private interface Run {
        Shell.Timing run(int n) throws Exception;
    }

    private interface After {
        void undo(int n) throws Exception;
    }

    private record Variant(String name, String what, Run run, After after) {
    }

    @Override
    public BenchResult run(BenchParams p) throws Exception {
        int files = p.getInt("files", 1);
        long bytes = (long) p.getInt("sizeMiB", 1) << 20;
        int rounds = p.getInt("rounds", 1);
        int warmup = p.getInt("warmup", 0);
        int threads = p.getInt("transferThreads", 1);
        boolean profile = p.getBoolean("profile");
        Path dir = Files.createTempDirectory(Path.of(p.get("workDir")), "rls-bench-" + name() + "-");
        Map<String, Object> params = new LinkedHashMap<>(p.asMap());
        List<AutoCloseable> open = new ArrayList<>(); // closed in this order: the last opened first
        try {
            CheckpointFiles source = CheckpointFiles.write(dir.resolve("checkpoint"), files, bytes, 42);
            Path snapshots = Files.createDirectories(dir.resolve("snapshots"));
            List<Variant> variants = new ArrayList<>();
            CommitPath commit;
            if (kind == Kind.DIRECTORY) {
                boolean fsync = p.getBoolean("fsync");
                DirectoryStore store = new DirectoryStore(dir.resolve("store"), fsync);
                commit = new CommitPath(store, threads, source.dir(), snapshots);
                open.add(0, commit);
                variants.add(commitVariant(commit, "our commit: snapshot, DirectoryStore puts (fsync " + fsync
                        + "), manifest, pointer move"));
                Path copies = Files.createDirectories(dir.resolve("copies"));
                variants.add(new Variant("cp -r", "cp -r of the checkpoint directory into the same file system",
                        n -> Shell.run("cp", "-r", source.dir().toString(), copies.resolve("run-" + n).toString()),
                        n -> LocalCluster.deleteTree(copies.resolve("run-" + n))));
                variants.add(new Variant("cp -r + sync", "cp -r, then sync of the copied files (each fsync'd)",
                        n -> copyAndSync(source, copies.resolve("run-" + n)),
                        n -> LocalCluster.deleteTree(copies.resolve("run-" + n))));
                if (profile) {
                    variants.add(putVariant("store puts", "ArtifactTransfers.putAll into the DirectoryStore alone (fsync "
                            + fsync + ")", commit.transfers(), source));
                    DirectoryStore unforced = new DirectoryStore(dir.resolve("store-unforced"), false);
                    ArtifactTransfers unforcedTransfers = new ArtifactTransfers(unforced, false,
                            ArtifactOptions.builder().transferThreads(threads).build(), "bench-unforced");
                    open.add(0, unforcedTransfers);
                    variants.add(putVariant("store puts, no fsync", "the same into a DirectoryStore that forces nothing",
                            unforcedTransfers, source));
                }
            } else {
                InJvmS3 server = InJvmS3.start(dir.resolve("s3"));
                open.add(0, server);
                long partSize = (long) p.getInt("partSizeMiB", 5) << 20;
                long threshold = (long) p.getInt("thresholdMiB", 5) << 20;
                S3Store store = S3Store.open(server.storeOptions("").partSize(partSize).multipartThreshold(threshold)
                        .parallelism(p.getInt("parallelism", 1)).build());
                open.add(0, store);
                commit = new CommitPath(store, threads, source.dir(), snapshots);
                open.add(0, commit);
                variants.add(commitVariant(commit, "our commit: snapshot, S3Store puts, manifest, pointer move"));
                TransferManagerUploads manager = new TransferManagerUploads(server, partSize, threshold);
                open.add(0, manager);
                variants.add(new Variant("transfer manager", "S3TransferManager.uploadFile of every file at once"
                        + " (S3AsyncClient multipart, Netty client)", n -> {
                    long began = System.nanoTime();
                    manager.uploadAll(source.files(), "baseline/run-" + n);
                    double s = (System.nanoTime() - began) / 1e9;
                    check(store.list("baseline/run-" + n), files, source.bytes(), "the transfer manager's upload");
                    return new Shell.Timing(s, 0);
                }, n -> store.deleteAll("baseline/run-" + n)));
                if (profile) {
                    variants.add(putVariant("store puts", "ArtifactTransfers.putAll into the S3Store alone",
                            commit.transfers(), source));
                }
            }
            if (profile) {
                variants.add(new Variant("sha256", "SHA-256 of the files alone, " + threads + " at once",
                        n -> new Shell.Timing(source.hashSeconds(threads), 0), n -> { }));
                variants.add(new Variant("hard links", "the snapshot's hard links alone (one per file)",
                        n -> links(source, snapshots.resolve("links-" + n)),
                        n -> LocalCluster.deleteTree(snapshots.resolve("links-" + n))));
            }
            params.put("persistence", commit.persistence());
            measure(variants, rounds, warmup, source, dir, commit, params);
        } finally {
            for (AutoCloseable c : open) {
                c.close();
            }
            LocalCluster.deleteTree(dir);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> medians = (Map<String, Object>) params.get("median_gib_per_s");
        double ours = (double) medians.get("our commit");
        double baseline = (double) medians.get(kind == Kind.DIRECTORY ? "cp -r" : "transfer manager");
        if (kind == Kind.DIRECTORY) {
            // The store forces every object to disk; cp -r forces nothing. The same copy made as durable:
            params.put("ratio_to_cp_r_sync", Stats.round3(ours / (double) medians.get("cp -r + sync")));
        }
        params.put("goal", ">= 0.8 of the baseline");
        params.put("goal_met", ours >= 0.8 * baseline);
        params.put("machine", Machine.describe());
        return new BenchResult(name(), "GiB/s", Stats.round3(ours),
                kind == Kind.DIRECTORY ? "cp -r" : "AWS SDK transfer manager", Stats.round3(baseline), params);
    }

    /** Runs every variant once per round, the order rotated each round; records medians and each run. */
    private void measure(List<Variant> variants, int rounds, int warmup, CheckpointFiles source, Path dir,
                         CommitPath commit, Map<String, Object> params) throws Exception {
        Map<String, List<Double>> seconds = new LinkedHashMap<>();
        Map<String, List<Double>> cpuSeconds = new LinkedHashMap<>();
        Map<String, Object> cpu = new LinkedHashMap<>();
        Map<String, String> what = new LinkedHashMap<>();
        variants.forEach(v -> {
            seconds.put(v.name(), new ArrayList<>());
            cpuSeconds.put(v.name(), new ArrayList<>());
            what.put(v.name(), v.what());
        });
        int n = 0;
        for (int round = -warmup; round < rounds; round++) {
            int shift = Math.floorMod(round, variants.size());
            for (int i = 0; i < variants.size(); i++) {
                Variant v = variants.get((i + shift) % variants.size());
                n++;
                Shell.seconds("sync", "-f", dir.toString());
                CpuUsage before = CpuUsage.snapshot(commit.admin());
                long jvmBefore = processCpuNanos();
                Shell.Timing t = v.run().run(n);
                double s = t.seconds();
                double cpuS = (processCpuNanos() - jvmBefore) / 1e9 + t.cpuSeconds();
                CpuUsage after = CpuUsage.snapshot(commit.admin());
                v.after().undo(n);
                System.out.printf(Locale.ROOT, "# %s %s%d %-22s %6.3f s  %6.3f GiB/s  CPU %6.3f s%n", name(),
                        round < 0 ? "warm-up " : "round ", round < 0 ? round + warmup + 1 : round + 1, v.name(), s,
                        source.bytes() / GIB / s, cpuS);
                if (round >= 0) {
                    seconds.get(v.name()).add(s);
                    cpuSeconds.get(v.name()).add(cpuS);
                    if (round == rounds - 1) {
                        cpu.put(v.name(), after.since(before, 1));
                    }
                }
            }
        }
        Map<String, Object> medians = new LinkedHashMap<>();
        Map<String, Object> cpuMedians = new LinkedHashMap<>();
        Map<String, Object> runs = new LinkedHashMap<>();
        Map<String, Object> cpuRuns = new LinkedHashMap<>();
        seconds.forEach((name, list) -> {
            medians.put(name, Stats.round3(source.bytes() / GIB / median(list)));
            runs.put(name, list.stream().map(Stats::round3).toList());
            cpuMedians.put(name, Stats.round3(median(cpuSeconds.get(name)) / (source.bytes() / GIB)));
            cpuRuns.put(name, cpuSeconds.get(name).stream().map(Stats::round3).toList());
        });
        params.put("median_gib_per_s", medians);
        params.put("median_cpu_s_per_gib", cpuMedians);
        params.put("runs_s", runs);
        params.put("runs_cpu_s", cpuRuns);
        params.put("variants", what);
        params.put("cpu_last_round", cpu);
        params.put("measured", "wall time of each variant moving all the files, from its call to its completion"
                + " (ours: until Redis points at the checkpoint); GiB/s = bytes / 2^30 / seconds, medians of the rounds;"
                + " CPU: this JVM's process CPU time during the run (the S3 server's included) plus that of the"
                + " commands it ran (bash's times), per GiB");
    }

    private static double median(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        return sorted.length % 2 == 1 ? sorted[sorted.length / 2]
                : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
    }

    private static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    private static Variant commitVariant(CommitPath commit, String what) {
        String[] id = new String[1];
        return new Variant("our commit", what, n -> {
            long began = System.nanoTime();
            id[0] = commit.commit();
            return new Shell.Timing((System.nanoTime() - began) / 1e9, 0);
        }, n -> commit.deleteFromStore(id[0]));
    }

    /** The store's puts of the files alone, under bench-puts/run-N/, checked by listing. */
    private static Variant putVariant(String name, String what, ArtifactTransfers transfers, CheckpointFiles source) {
        return new Variant(name, what, n -> {
            List<Map.Entry<String, Path>> puts = new ArrayList<>();
            for (Path f : source.files()) {
                puts.add(new AbstractMap.SimpleEntry<>("bench-puts/run-" + n + "/" + f.getFileName(), f));
            }
            long began = System.nanoTime();
            transfers.putAll(puts);
            double s = (System.nanoTime() - began) / 1e9;
            check(transfers.store().list("bench-puts/run-" + n), source.files().size(), source.bytes(), name);
            return new Shell.Timing(s, 0);
        }, n -> transfers.store().deleteAll("bench-puts/run-" + n));
    }

    private static void check(List<StoredObject> stored, int files, long bytes, String what) {
        long total = stored.stream().mapToLong(StoredObject::getSize).sum();
        if (stored.size() != files || total != bytes) {
            throw new IllegalStateException(what + " stored " + stored.size() + " objects of " + total + " bytes; expected "
                    + files + " of " + bytes);
        }
    }

    private static Shell.Timing copyAndSync(CheckpointFiles source, Path target) throws Exception {
        long began = System.nanoTime();
        Shell.Timing copy = Shell.run("cp", "-r", source.dir().toString(), target.toString());
        List<String> sync = new ArrayList<>(List.of("sync"));
        for (Path f : source.files()) {
            sync.add(target.resolve(f.getFileName()).toString());
        }
        Shell.Timing synced = Shell.run(sync.toArray(new String[0]));
        return new Shell.Timing((System.nanoTime() - began) / 1e9, copy.cpuSeconds() + synced.cpuSeconds());
    }

    private static Shell.Timing links(CheckpointFiles source, Path target) throws Exception {
        long began = System.nanoTime();
        Files.createDirectories(target);
        for (Path f : source.files()) {
            Files.createLink(target.resolve(f.getFileName()), f);
        }
        return new Shell.Timing((System.nanoTime() - began) / 1e9, 0);
    }
}
