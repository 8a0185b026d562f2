package io.rlscheduler.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.rlscheduler.http.HttpLab;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** clients/python/tests/test_against_server.py under python3 against a real master. */
class PythonClientIT {
    @TempDir
    Path tmp;

    @Test
    void pythonClientPassesItsChecksAgainstARealMaster() throws Exception {
        try (HttpLab lab = HttpLab.start(tmp.resolve("lab"), 2, 2)) {
            lab.writeScript("echo.py", LabProcesses.ECHO_SCRIPT);
            Path gates = Files.createDirectories(tmp.resolve("gates"));
            ProcessBuilder pb = new ProcessBuilder("python3", "clients/python/tests/test_against_server.py")
                    .directory(LabProcesses.repositoryRoot().toFile());
            pb.environment().remove("RLS_CONFIG");
            pb.environment().put("HOME", tmp.toString());
            pb.environment().put("RLS_SERVER", lab.url());
            pb.environment().put("RLS_TOKEN", lab.token("carol"));
            pb.environment().put("RLS_TEST_SCRIPT", "echo.py");
            pb.environment().put("RLS_TEST_GATE_DIR", gates.toString());
            LabProcesses.Result r = new LabProcesses.Running(pb, tmp.resolve("out")).await(300);
            assertThat(r.code()).as(r.toString()).isZero();
            assertThat(r.out()).as(r.toString()).contains("ok logs follow", "ok wait failed", "ok compare best",
                    "ok wait cancelled", "ok bad token", "ok metrics").endsWith("ALL OK\n");
        }
    }
}
