package io.rlscheduler.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Runs clients/python/tests/test_offline.py (the Python client against a scripted server) under python3. */
class RlsPythonOfflineTest {
    static Path repositoryRoot() {
        Path dir = Path.of("").toAbsolutePath();
        while (dir != null && !Files.isDirectory(dir.resolve("clients/python"))) {
            dir = dir.getParent();
        }
        if (dir == null) {
            throw new IllegalStateException("no clients/python above " + Path.of("").toAbsolutePath());
        }
        return dir;
    }


    @Test
    void offlineSuitePasses() throws Exception {
        Path root = repositoryRoot();
        Path log = Files.createTempFile("rls-python-offline", ".log");
        ProcessBuilder pb = new ProcessBuilder("python3", "clients/python/tests/test_offline.py")
                .directory(root.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().remove("RLS_SERVER");
        pb.environment().remove("RLS_TOKEN");
        pb.environment().remove("RLS_CONFIG");
        Process p = pb.start();
        boolean ended = p.waitFor(120, TimeUnit.SECONDS);
        if (!ended) {
            p.destroyForcibly();
        }
        String output = Files.readString(log, StandardCharsets.UTF_8);
        Files.deleteIfExists(log);
        assertThat(ended).as(output).isTrue();
        assertThat(p.exitValue()).as(output).isZero();
        assertThat(output).contains("OK").doesNotContain("FAILED");
        assertThat(new File(root.toFile(), "clients/python/rls_client.py")).exists();
    }
}
