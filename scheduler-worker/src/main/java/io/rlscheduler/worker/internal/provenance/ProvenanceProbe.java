package io.rlscheduler.worker.internal.provenance;

import io.rlscheduler.core.AttemptProvenance;
import io.rlscheduler.core.internal.ProvenanceFormat;
import io.rlscheduler.protocol.GpuStatus;
import io.rlscheduler.worker.TaskContext;
import io.rlscheduler.worker.TaskExecution;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Collects the provenance of an attempt that has just started: the SHA-256 of the file its
 * execution runs, where that file stands in git ({@link GitWorkTree}), the interpreter and its
 * version, the machine's hostname, and the UUIDs of the attempt's GPUs as the worker's last
 * nvidia-smi probe reported them (null for a GPU it did not report). What belongs to the machine
 * (the hostname, each interpreter's version) is read once and kept; the file's hash and git are
 * asked for every attempt. Blocks while it reads the file and runs git: call it on a task
 * thread. Thread-safe.
 */
final class ProvenanceProbe {

    private static final Logger log = LoggerFactory.getLogger(ProvenanceProbe.class);
    /** The longest {@code <interpreter> --version} may take. */
    static final long VERSION_TIMEOUT_MILLIS = 5_000;
    private static final Path KERNEL_HOSTNAME = Path.of("/proc/sys/kernel/hostname");

    private final String workerId;
    private final Supplier<List<GpuStatus>> gpus;
    private final GitWorkTree git;
    private final Map<String, String> versions = new ConcurrentHashMap<>();
    private volatile String hostname;

    /**
     * @param workerId the worker
     * @param gpus     the GPUs of the worker's last nvidia-smi probe (never waits for one)
     * @param git      the git command
     */
    ProvenanceProbe(String workerId, Supplier<List<GpuStatus>> gpus, String git) {
        this.workerId = workerId;
        this.gpus = gpus;
        this.git = new GitWorkTree(git);
    }

    /** Returns the provenance of the attempt of {@code context} that {@code execution} runs. */
    AttemptProvenance collect(TaskContext context, TaskExecution execution) {
        Path script = execution.getScriptFile().orElse(null);
        String interpreter = execution.getInterpreter().orElse(null);
        String sha256 = null;
        GitWorkTree.State state = GitWorkTree.State.NONE;
        if (script != null) {
            sha256 = sha256(script);
            state = git.of(script);
        }
        Map<Integer, String> uuids = new HashMap<>();
        for (GpuStatus gpu : gpus.get()) {
            if (!gpu.getUuid().isEmpty()) {
                uuids.put(gpu.getIndex(), gpu.getUuid());
            }
        }
        List<String> gpuUuids = new ArrayList<>(context.getGpuIds().size());
        context.getGpuIds().forEach(id -> gpuUuids.add(uuids.get(id)));
        return ProvenanceFormat.of(context.getTaskId(), context.getAttempt(), context.getEpoch(), workerId, hostname(),
                script == null ? null : script.toString(), sha256, state.commit(), state.dirty(), interpreter,
                interpreter == null ? null : version(interpreter), context.getGpuIds(), gpuUuids);
    }

    /** The SHA-256 of a file's bytes as hex, or null when it cannot be read. */
    static String sha256(Path file) {
        MessageDigest digest;
        try {
            digest = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required of every Java runtime", e);
        }
        byte[] buffer = new byte[64 * 1024];
        try (InputStream in = Files.newInputStream(file)) {
            for (int n; (n = in.read(buffer)) > 0; ) {
                digest.update(buffer, 0, n);
            }
        } catch (IOException e) {
            log.warn("cannot read {} for its SHA-256: {}", file, e.toString());
            return null;
        }
        return HexFormat.of().formatHex(digest.digest());
    }

    /** The machine's hostname as the kernel has it (no DNS), or as Java resolves it; read once. */
    private String hostname() {
        String known = hostname;
        if (known != null) {
            return known;
        }
        try {
            known = Files.readString(KERNEL_HOSTNAME).strip();
        } catch (IOException | RuntimeException e) {
            known = "";
        }
        if (known.isEmpty()) {
            try {
                known = InetAddress.getLocalHost().getHostName();
            } catch (IOException e) {
                log.warn("cannot read this machine's hostname: {}", e.toString());
                return null;
            }
        }
        hostname = known;
        return known;
    }

    /** The first line {@code interpreter --version} prints; kept once read, asked again after a failure. */
    private String version(String interpreter) {
        String known = versions.get(interpreter);
        if (known != null) {
            return known;
        }
        ShortCommand.Result result = ShortCommand.run(List.of(interpreter, "--version"), null, Map.of(),
                VERSION_TIMEOUT_MILLIS, true, null);
        String first = result.lines().stream().map(String::strip).filter(l -> !l.isEmpty()).findFirst().orElse(null);
        if (!result.succeeded() || first == null) {
            log.warn("{} --version did not say its version ({}, {})", interpreter, result.outcome(), result.lines());
            return null;
        }
        versions.put(interpreter, first);
        return first;
    }
}
