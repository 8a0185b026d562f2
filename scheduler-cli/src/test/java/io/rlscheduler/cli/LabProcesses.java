package io.rlscheduler.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** What the integration tests share: the test script, and running rls or python3 as real processes. */
final class LabProcesses {
    /**
     * The test script (python3, standard library only): its parameters from RLS_PARAMS_FILE; waits
     * for the file {@code gate} when given; prints {@code line i} and an RLS_METRIC line
     * ({@code step}, {@code reward = lr * i}) for i in 1..{@code lines}; exits with {@code exit}.
     */
    static final String ECHO_SCRIPT = String.join("\n",
            "import json, os, sys, time",
            "p = {}",
            "if os.environ.get('RLS_PARAMS_FILE'):",
            "    with open(os.environ['RLS_PARAMS_FILE']) as f:",
            "        p = json.load(f)",
            "gate = p.get('gate')",
            "if gate:",
            "    while not os.path.exists(gate):",
            "        time.sleep(0.02)",
            "lr = float(p.get('lr', 0.1))",
            "for i in range(1, int(p.get('lines', 3)) + 1):",
            "    print('line %d' % i, flush=True)",
            "    print('RLS_METRIC ' + json.dumps({'step': i, 'reward': round(lr * i, 6)}), flush=True)",
            "sys.exit(int(p.get('exit', 0)))",
            "");

    private LabProcesses() {
    }

    record Result(int code, String out, String err) {
        List<String> outLines() {
            return out.lines().toList();
        }

        @Override
        public String toString() {
            return "exit " + code + "\n--- stdout\n" + out + "--- stderr\n" + err;
        }
    }

    /** A started process whose output goes to files (no pipe can fill up). */
    static final class Running {
        private final Process process;
        private final Path out;
        private final Path err;

        Running(ProcessBuilder pb, Path dir) throws IOException {
            Files.createDirectories(dir);
            this.out = Files.createTempFile(dir, "out", ".txt");
            this.err = Files.createTempFile(dir, "err", ".txt");
            pb.redirectOutput(out.toFile()).redirectError(err.toFile());
            this.process = pb.start();
        }

        Result await(long seconds) throws IOException, InterruptedException {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                throw new AssertionError("did not end in " + seconds + " s: stdout " + Files.readString(out)
                        + " stderr " + Files.readString(err));
            }
            return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        }
    }

    static Path repositoryRoot() {
        return RlsPythonOfflineTest.repositoryRoot();
    }

    /** {@code java -jar scheduler-cli/target/rls.jar args}, with a home of its own (no user's config file). */
    static ProcessBuilder rls(Path home, Map<String, String> env, String... args) {
        Path jar = repositoryRoot().resolve("scheduler-cli/target/rls.jar");
        if (!Files.isRegularFile(jar)) {
            throw new IllegalStateException(jar + " is missing: the integration tests run after package");
        }
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Duser.home=" + home, "-jar", jar.toString()));
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command).directory(repositoryRoot().toFile());
        pb.environment().remove("RLS_SERVER");
        pb.environment().remove("RLS_TOKEN");
        pb.environment().remove("RLS_CONFIG");
        pb.environment().putAll(env);
        return pb;
    }
}
