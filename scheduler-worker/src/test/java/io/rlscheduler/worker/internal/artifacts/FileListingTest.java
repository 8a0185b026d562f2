package io.rlscheduler.worker.internal.artifacts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What may leave the machine from a script's directory: hostile names and links, and the limits, on a real file system. */
class FileListingTest {

    @TempDir
    Path dir;

    @Test
    void linksFifosAndUnstorableNamesAreSkippedAndSaidAndNothingOutsideIsRead() throws Exception {
        Path outside = Files.createDirectory(dir.resolve("outside"));
        Files.writeString(outside.resolve("secret"), "not yours");
        Path ck = Files.createDirectory(dir.resolve("ck"));
        Files.writeString(ck.resolve("model.bin"), "weights");
        Files.createDirectories(ck.resolve("sub"));
        Files.writeString(ck.resolve("sub/opt.bin"), "state");
        Files.createSymbolicLink(ck.resolve("etc"), Path.of("/etc"));
        Files.createSymbolicLink(ck.resolve("passwd"), Path.of("/etc/passwd"));
        Files.createSymbolicLink(ck.resolve("up"), outside);
        Files.writeString(ck.resolve("new\nline"), "x");
        Files.writeString(ck.resolve("back\\slash"), "x");
        Files.writeString(ck.resolve(".tmp-partial"), "half");
        new ProcessBuilder("mkfifo", ck.resolve("fifo").toString()).start().waitFor();

        FileListing.Result r = FileListing.list(ck, ck, 100, 1 << 20);
        assertThat(r.files()).extracting(FileListing.Entry::path).containsExactly("model.bin", "sub/opt.bin");
        assertThat(r.bytes()).isEqualTo(12);
        assertThat(r.skipped()).containsExactlyInAnyOrder(
                "etc: a symbolic link, not followed", "passwd: a symbolic link, not followed",
                "up: a symbolic link, not followed", "fifo: not a regular file",
                "new\\x0aline: a name that cannot be stored (control characters, a backslash, too long)",
                "back\\slash: a name that cannot be stored (control characters, a backslash, too long)");
        assertThat(r.files()).allSatisfy(e -> assertThat(e.file().toRealPath()).startsWith(ck.toRealPath()));
    }

    @Test
    void aWalkOutsideTheRootIsRefused() {
        assertThatThrownBy(() -> FileListing.list(dir.resolve("ck"), dir.resolve("ck/../other"), 10, 10))
                .hasMessageContaining("is not inside");
    }

    @Test
    void tenThousandTinyFilesAndOneHugeFileStopAtTheLimitsWithAClearError() throws Exception {
        Path many = Files.createDirectory(dir.resolve("many"));
        for (int i = 0; i < 10_000; i++) {
            Files.write(many.resolve("f" + i), new byte[] {1});
        }
        assertThatThrownBy(() -> FileListing.list(many, many, 1000, Long.MAX_VALUE))
                .isInstanceOf(FileListing.LimitExceeded.class).hasMessage("more than 1000 files");

        Path huge = Files.createDirectory(dir.resolve("huge"));
        try (RandomAccessFile f = new RandomAccessFile(huge.resolve("model.bin").toFile(), "rw")) {
            f.setLength(5L << 30); // sparse: 5 GiB that take no disk
        }
        assertThatThrownBy(() -> FileListing.list(huge, huge, 10, 1L << 30))
                .isInstanceOf(FileListing.LimitExceeded.class).hasMessage("more than 1073741824 bytes (at model.bin)");
    }

    @Test
    void aLineNamesAnEntryInsideTheDirectoryOrIsRefusedWithWhy() {
        assertThat(CheckpointLine.path("RLS_CHECKPOINT")).isEmpty();
        assertThat(CheckpointLine.path("RLS_CHECKPOINT {}")).isEmpty();
        assertThat(CheckpointLine.path("RLS_CHECKPOINT {\"path\":\"ckpt-000012/\"}")).isEqualTo("ckpt-000012");
        assertThat(CheckpointLine.is("RLS_CHECKPOINTS are nice")).isFalse();
        assertThat(CheckpointLine.of("ckpt-1")).isEqualTo("RLS_CHECKPOINT {\"path\":\"ckpt-1\"}");
        assertThatThrownBy(() -> CheckpointLine.path("RLS_CHECKPOINT {\"path\":\"../../etc\"}"))
                .hasMessageContaining("inside the checkpoint directory");
        assertThatThrownBy(() -> CheckpointLine.path("RLS_CHECKPOINT {\"path\":\"/etc\"}"))
                .hasMessageContaining("inside the checkpoint directory");
        assertThatThrownBy(() -> CheckpointLine.path("RLS_CHECKPOINT {\"path\":\".hidden\"}"))
                .hasMessageContaining("not hidden");
        assertThatThrownBy(() -> CheckpointLine.path("RLS_CHECKPOINT [1]")).hasMessageContaining("not a JSON object");
        assertThatThrownBy(() -> CheckpointLine.path("RLS_CHECKPOINT {\"path\":3}")).hasMessageContaining("must be a string");
    }
}
