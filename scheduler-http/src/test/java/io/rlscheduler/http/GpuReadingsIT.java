package io.rlscheduler.http;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The GPU board's figures: memory and utilisation of each GPU as the worker's nvidia-smi reads
 * them, served by the API of the leader the worker is connected to and by a standby's API alike
 * (the leader publishes them to Redis). This machine has no GPUs, so the worker runs an
 * nvidia-smi of the test's that prints what a file holds, in nvidia-smi's CSV form.
 */
class GpuReadingsIT {

    private static final long MIB = 1024L * 1024;

    @TempDir
    Path dir;

    @Test
    void memoryAndUtilisationOfEachGpuAreServedByTheLeadersApiAndAStandbysAndFollowTheReadings() throws Exception {
        Path readings = dir.resolve("readings.csv");
        write(readings, "0, GPU-1111, NVIDIA H100 80GB HBM3, 81559, 1234, 37\n"
                + "1, GPU-2222, NVIDIA H100 80GB HBM3, 81559, 40000, 99\n");
        Path nvidiaSmi = dir.resolve("nvidia-smi");
        Files.writeString(nvidiaSmi, "#!/bin/sh\nexec cat '" + readings + "'\n");
        Files.setPosixFilePermissions(nvidiaSmi, PosixFilePermissions.fromString("rwx------"));
        // machine-1 has GPUs 0 and 1 and the nvidia-smi above; machine-2 GPUs 2 and 3 and none.
        try (HttpLab lab = HttpLab.start(dir.resolve("lab"), 2, 2, api -> { },
                (i, worker) -> worker.nvidiaSmi(i == 1 ? nvidiaSmi.toString() : dir.resolve("absent").toString()))) {
            Http leader = new Http(lab.url(), lab.adminToken());
            Http standby = new Http(lab.standbyUrl(), lab.adminToken());
            for (Http api : List.of(leader, standby)) {
                Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    JsonNode gpu0 = gpu(api, "machine-1", 0);
                    assertThat(gpu0.path("uuid").asText()).isEqualTo("GPU-1111");
                    assertThat(gpu0.path("name").asText()).isEqualTo("NVIDIA H100 80GB HBM3");
                    assertThat(gpu0.path("memoryTotalBytes").asLong()).isEqualTo(81559 * MIB);
                    assertThat(gpu0.path("memoryUsedBytes").asLong()).isEqualTo(1234 * MIB);
                    assertThat(gpu0.path("utilizationPercent").asInt()).isEqualTo(37);
                    JsonNode gpu1 = gpu(api, "machine-1", 1);
                    assertThat(gpu1.path("memoryUsedBytes").asLong()).isEqualTo(40000 * MIB);
                    assertThat(gpu1.path("utilizationPercent").asInt()).isEqualTo(99);
                });
                // A machine whose nvidia-smi cannot run has its GPUs listed, without figures.
                JsonNode gpu2 = gpu(api, "machine-2", 2);
                assertThat(gpu2.path("memoryUsedBytes").isNull()).isTrue();
                assertThat(gpu2.path("utilizationPercent").isNull()).isTrue();
                assertThat(gpu2.path("free").asBoolean()).isTrue();
            }

            write(readings, "0, GPU-1111, NVIDIA H100 80GB HBM3, 81559, 70000, 88\n"
                    + "1, GPU-2222, NVIDIA H100 80GB HBM3, 81559, 40000, 99\n");
            for (Http api : List.of(leader, standby)) {
                Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    JsonNode gpu0 = gpu(api, "machine-1", 0);
                    assertThat(gpu0.path("memoryUsedBytes").asLong()).isEqualTo(70000 * MIB);
                    assertThat(gpu0.path("utilizationPercent").asInt()).isEqualTo(88);
                });
            }

            // A worker that leaves takes its readings with it, on every master's API.
            lab.workers().get(0).close();
            Awaitility.await().atMost(Duration.ofSeconds(30)).untilAsserted(() ->
                    assertThat(gpu(standby, "machine-1", 0).path("utilizationPercent").isNull()).isTrue());
            assertThat(gpu(leader, "machine-1", 0).path("utilizationPercent").isNull()).isTrue();
        }
    }

    private static JsonNode gpu(Http api, String workerId, int index) {
        Http.Answer answer = api.get("/api/v1/workers");
        assertThat(answer.status()).isEqualTo(200);
        for (JsonNode w : answer.json().path("workers")) {
            if (w.path("id").asText().equals(workerId)) {
                for (JsonNode g : w.path("gpus")) {
                    if (g.path("index").asInt() == index) {
                        return g;
                    }
                }
            }
        }
        throw new AssertionError("no GPU " + index + " of " + workerId + " in " + answer.body());
    }

    private static void write(Path file, String text) throws IOException {
        Path next = file.resolveSibling(file.getFileName() + ".next");
        Files.writeString(next, text);
        Files.move(next, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }
}
