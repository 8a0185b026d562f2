package io.rlscheduler.bench;

import io.rlscheduler.bench.harness.BenchParams;
import io.rlscheduler.bench.harness.BenchResult;
import io.rlscheduler.bench.harness.Benchmarks;
import io.rlscheduler.bench.harness.EndToEndBenchmark;
import io.rlscheduler.bench.harness.JmhReport;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs the end-to-end benchmarks and writes one {@code <out>/<name>.json} per benchmark (see
 * {@link BenchResult} for the shape), then prints a table of the results.
 *
 * <pre>
 * java -cp scheduler-bench/target/benchmarks.jar io.rlscheduler.bench.BenchMain [options] [name...]
 *   name...            benchmarks to run (default: all, see --list)
 *   -p key=value       a parameter of every named benchmark that declares it
 *   -p name.key=value  a parameter of one benchmark
 *   --out DIR          where results go (default bench-results)
 *   --list             list the benchmarks and their parameters
 *   --names            print the names of the end-to-end benchmarks, one a line
 *   --from-jmh NAME FILE   convert a JMH JSON report into DIR/NAME.json (codec, lease-scripts)
 *   --table NAME...    print the table of results already in DIR
 * </pre>
 *
 * Exits 1 if a benchmark fails (the others still run), 2 on a usage error.
 */
public final class BenchMain {

    private BenchMain() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args));
    }

    static int run(String[] args) throws Exception {
        Path out = Path.of("bench-results");
        List<String> names = new ArrayList<>();
        Map<String, String> given = new LinkedHashMap<>();
        String mode = "run";
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "-p" -> {
                    if (i + 1 >= args.length || !args[i + 1].contains("=")) {
                        return usage("-p needs key=value");
                    }
                    String[] kv = args[++i].split("=", 2);
                    given.put(kv[0], kv[1]);
                }
                case "--out" -> {
                    if (i + 1 >= args.length) {
                        return usage("--out needs a directory");
                    }
                    out = Path.of(args[++i]);
                }
                case "--list" -> mode = "list";
                case "--names" -> mode = "names";
                case "--table" -> mode = "table";
                case "--from-jmh" -> mode = "from-jmh";
                case "-h", "--help" -> {
                    return usage(null);
                }
                default -> {
                    if (a.startsWith("-")) {
                        return usage("unknown option " + a);
                    }
                    names.add(a);
                }
            }
        }
        switch (mode) {
            case "list" -> {
                for (EndToEndBenchmark b : Benchmarks.ALL) {
                    System.out.println(b.name() + ": " + b.description());
                    for (EndToEndBenchmark.Param p : b.parameters()) {
                        System.out.printf(Locale.ROOT, "    %-18s %-8s %s%n", p.name(), p.defaultValue(), p.description());
                    }
                }
                System.out.println("JMH results scripts/bench.sh converts: " + JmhReport.NAMES);
                return 0;
            }
            case "names" -> {
                Benchmarks.ALL.forEach(b -> System.out.println(b.name()));
                return 0;
            }
            case "table" -> {
                List<BenchResult> results = new ArrayList<>();
                for (String name : names) {
                    Path file = out.resolve(name + ".json");
                    if (Files.isRegularFile(file)) {
                        results.add(BenchResult.read(file));
                    } else {
                        System.err.println("no result for " + name + " (" + file + ")");
                    }
                }
                System.out.print(BenchResult.table(results));
                return results.size() == names.size() ? 0 : 1;
            }
            case "from-jmh" -> {
                if (names.size() != 2) {
                    return usage("--from-jmh takes a name and a JMH JSON file");
                }
                BenchResult r = JmhReport.convert(names.get(0), Path.of(names.get(1)));
                System.out.println("# wrote " + r.write(out));
                return 0;
            }
            default -> {
                return runBenchmarks(names, given, out);
            }
        }
    }

    private static int runBenchmarks(List<String> names, Map<String, String> given, Path out) throws Exception {
        List<EndToEndBenchmark> selected = new ArrayList<>();
        if (names.isEmpty()) {
            selected.addAll(Benchmarks.ALL);
        }
        for (String name : names) {
            EndToEndBenchmark b = Benchmarks.byName(name).orElse(null);
            if (b == null) {
                return usage("unknown benchmark '" + name + "'");
            }
            selected.add(b);
        }
        // Check every parameter before running anything.
        Map<EndToEndBenchmark, Map<String, String>> perBenchmark = new LinkedHashMap<>();
        for (EndToEndBenchmark b : selected) {
            perBenchmark.put(b, new HashMap<>());
        }
        for (Map.Entry<String, String> e : given.entrySet()) {
            String key = e.getKey();
            boolean scopedElsewhere = Benchmarks.ALL.stream()
                    .anyMatch(b -> !selected.contains(b) && key.startsWith(b.name() + "."));
            if (scopedElsewhere) {
                continue; // a parameter of a benchmark not run this time
            }
            boolean used = false;
            for (EndToEndBenchmark b : selected) {
                String own = key.startsWith(b.name() + ".") ? key.substring(b.name().length() + 1) : key;
                if (b.parameters().stream().anyMatch(p -> p.name().equals(own))) {
                    perBenchmark.get(b).put(own, e.getValue());
                    used = true;
                }
            }
            if (!used) {
                return usage("no selected benchmark has the parameter '" + key + "' (see --list)");
            }
        }
        Map<EndToEndBenchmark, BenchParams> params = new LinkedHashMap<>();
        for (EndToEndBenchmark b : selected) {
            try {
                params.put(b, new BenchParams(b.name(), b.parameters(), perBenchmark.get(b)));
            } catch (IllegalArgumentException e) {
                return usage(e.getMessage());
            }
        }
        List<BenchResult> results = new ArrayList<>();
        List<String> failed = new ArrayList<>();
        for (EndToEndBenchmark b : selected) {
            System.out.println("# ---- " + b.name() + " " + params.get(b).asMap());
            long began = System.nanoTime();
            try {
                BenchResult r = b.run(params.get(b));
                Path file = r.write(out);
                results.add(r);
                System.out.printf(Locale.ROOT, "# %s done in %.0f s: %s %s (baseline %s %s) -> %s%n", b.name(),
                        (System.nanoTime() - began) / 1e9, BenchResult.format(r.getValue()), r.getUnit(),
                        BenchResult.format(r.getBaselineValue()), r.getUnit(), file);
            } catch (Exception | AssertionError e) {
                failed.add(b.name());
                System.out.println("# " + b.name() + " FAILED after " + Math.round((System.nanoTime() - began) / 1e9) + " s: " + e);
                e.printStackTrace(System.out);
            }
        }
        System.out.println();
        System.out.print(BenchResult.table(results));
        if (!failed.isEmpty()) {
            System.out.println("failed: " + failed);
            return 1;
        }
        return 0;
    }

    private static int usage(String error) {
        if (error != null) {
            System.err.println("BenchMain: " + error);
        }
        System.err.println("usage: BenchMain [-p key=value | -p name.key=value]... [--out DIR] [name...]\n"
                + "       BenchMain --list | --names\n"
                + "       BenchMain [--out DIR] --table name...\n"
                + "       BenchMain [--out DIR] --from-jmh codec|lease-scripts JMH_JSON_FILE");
        return error == null ? 0 : 2;
    }
}
