package io.rlscheduler.master;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class GpuReadingsTest {

    @Test
    void eachWorkersReadingsAreDecodedAndAnUnreadableEntryIsLeftOutAlone() {
        Map<String, List<WorkerUsage.Gpu>> read = GpuReadings.decode(Map.of(
                "w1", "[[0,\"GPU-a\",\"H100\",85520809984,1293942784,37],[1,\"GPU-b\",\"H100\",85520809984,0,0]]",
                "w2", "not json",
                "w3", "[[\"zero\",\"GPU-c\",\"H100\",1,1,1]]",
                "w4", "[]"));
        assertThat(read).containsOnlyKeys("w1", "w4");
        WorkerUsage.Gpu gpu = read.get("w1").get(0);
        assertThat(gpu.getIndex()).isZero();
        assertThat(gpu.getUuid()).isEqualTo("GPU-a");
        assertThat(gpu.getName()).isEqualTo("H100");
        assertThat(gpu.getMemoryTotalBytes()).isEqualTo(85520809984L);
        assertThat(gpu.getMemoryUsedBytes()).isEqualTo(1293942784L);
        assertThat(gpu.getUtilizationPercent()).isEqualTo(37);
        assertThat(read.get("w1").get(1).getIndex()).isEqualTo(1);
        assertThat(read.get("w4")).isEmpty();
    }
}
