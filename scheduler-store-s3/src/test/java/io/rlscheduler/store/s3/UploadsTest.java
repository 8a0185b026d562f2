package io.rlscheduler.store.s3;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class UploadsTest {

    private static final long MIB = 1L << 20;

    @Test
    void aFileOfMoreThanTenThousandPartsGetsLargerPartsInWholeMebibytes() {
        long part = 16 * MIB;
        assertThat(Uploads.partSize(part, 40 * MIB)).isEqualTo(part);
        assertThat(Uploads.partSize(part, part * Uploads.MAX_PARTS)).isEqualTo(part);
        long big = part * Uploads.MAX_PARTS + 1;
        long raised = Uploads.partSize(part, big);
        assertThat(raised).isEqualTo(17 * MIB);
        assertThat((big + raised - 1) / raised).isLessThanOrEqualTo(Uploads.MAX_PARTS);
        long fiveTiB = 5L << 40;
        assertThat((fiveTiB + Uploads.partSize(part, fiveTiB) - 1) / Uploads.partSize(part, fiveTiB)).isLessThanOrEqualTo(Uploads.MAX_PARTS);
    }
}
