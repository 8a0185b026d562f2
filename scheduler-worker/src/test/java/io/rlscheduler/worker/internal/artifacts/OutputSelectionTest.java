package io.rlscheduler.worker.internal.artifacts;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

class OutputSelectionTest {

    private static final String PREFIX = "tasks/t/outputs/attempt-1";

    private static FileListing.Entry file(String path, long size) {
        return new FileListing.Entry(path, Path.of("/runs/t/attempt-1").resolve(path), size, 0);
    }

    private static List<String> paths(List<FileListing.Entry> entries) {
        return entries.stream().map(FileListing.Entry::path).toList();
    }

    @Test
    void theFirstFilesByPathAreTakenWhateverOrderTheWalkFindsThemIn() {
        List<FileListing.Entry> all = new ArrayList<>();
        for (int i = 0; i < 100; i++) {
            all.add(file(String.format("tiny/%03d", i), 1));
        }
        Collections.shuffle(all, new Random(7));
        OutputSelection s = new OutputSelection(PREFIX, 10, 1 << 20);
        all.forEach(s::file);

        assertThat(paths(s.select())).containsExactly("tiny/000", "tiny/001", "tiny/002", "tiny/003", "tiny/004",
                "tiny/005", "tiny/006", "tiny/007", "tiny/008", "tiny/009");
        assertThat(s.bytes()).isEqualTo(10);
        assertThat(s.isComplete()).isFalse();
        assertThat(s.leftCount()).isEqualTo(90);
        assertThat(s.left()).hasSize(90).first().hasToString("tiny/010: over maxOutputFiles (10)");
        assertThat(s.error()).isEqualTo("more files than maxOutputFiles (10): 90 files not stored");
    }

    @Test
    void aFileThatDoesNotFitTheBytesLimitIsLeftOutAndSmallerOnesAfterItAreStillTaken() {
        OutputSelection s = new OutputSelection(PREFIX, 100, 1000);
        s.file(file("model.pt", 5000));
        s.file(file("events.out", 600));
        s.file(file("plot.png", 300));
        s.file(file("zz.txt", 200));

        assertThat(paths(s.select())).containsExactly("events.out", "plot.png");
        assertThat(s.bytes()).isEqualTo(900);
        assertThat(s.left()).extracting(OutputSelection.Left::path).containsExactly("model.pt", "zz.txt");
        assertThat(s.left().get(0).why()).isEqualTo("5000 bytes, over maxOutputBytes (1000 bytes)");
        assertThat(s.error()).isEqualTo("2 files of 5200 bytes over maxOutputBytes (1000 bytes) not stored");
        assertThat(s.isComplete()).isFalse();
    }

    @Test
    void linksAndOtherNonRegularEntriesAreListedWithoutMakingTheOutputsIncomplete() {
        OutputSelection s = new OutputSelection(PREFIX, 100, 1000);
        s.file(file("ok.txt", 3));
        s.skipped("etc", FileListing.Skip.SYMBOLIC_LINK);
        s.skipped("pipe", FileListing.Skip.NOT_REGULAR);

        assertThat(paths(s.select())).containsExactly("ok.txt");
        assertThat(s.isComplete()).isTrue();
        assertThat(s.error()).isEmpty();
        assertThat(s.left()).extracting(Object::toString)
                .containsExactly("etc: a symbolic link, not followed", "pipe: not a regular file");
        assertThat(s.leftCount()).isEqualTo(2);
    }

    @Test
    void aNameThatCannotBeStoredMakesTheOutputsIncomplete() {
        OutputSelection s = new OutputSelection(PREFIX, 100, 1000);
        s.skipped("bad\\x0aname.txt", FileListing.Skip.UNSTORABLE_NAME);
        // Valid on its own, too long under the outputs prefix.
        s.file(file("d/" + "x".repeat(250) + "/" + "y".repeat(250) + "/" + "z".repeat(250) + "/" + "w".repeat(250), 1));

        assertThat(s.select()).isEmpty();
        assertThat(s.isComplete()).isFalse();
        assertThat(s.error()).isEqualTo("2 files with a name that cannot be stored (control characters, a backslash,"
                + " too long) not stored");
        assertThat(s.left()).extracting(OutputSelection.Left::reason)
                .containsExactly(OutputSelection.Reason.UNSTORABLE_NAME, OutputSelection.Reason.UNSTORABLE_NAME);
    }

    @Test
    void aFileThatCouldNotBeReadWhenSentIsLeftOutAndNotCounted() {
        OutputSelection s = new OutputSelection(PREFIX, 100, 1000);
        s.file(file("a", 10));
        s.file(file("b", 20));
        List<FileListing.Entry> taken = s.select();
        s.unreadable(taken.get(1), "java.nio.file.NoSuchFileException: b");

        assertThat(s.bytes()).isEqualTo(10);
        assertThat(s.isComplete()).isFalse();
        assertThat(s.error()).isEqualTo("1 file that could not be read not stored");
        assertThat(s.left()).singleElement().hasToString("b: could not be read: java.nio.file.NoSuchFileException: b");
    }

    @Test
    void aRunDirectoryThatCouldNotBeReadMakesTheOutputsIncompleteSayingWhy() {
        OutputSelection s = new OutputSelection(PREFIX, 100, 1000);
        s.file(file("a", 1));
        s.failed("permission denied");
        assertThat(paths(s.select())).containsExactly("a");
        assertThat(s.isComplete()).isFalse();
        assertThat(s.error()).isEqualTo("the run directory could not be read: permission denied");
    }

    @Test
    void theEntriesListedAreBoundedAndAllAreCounted() {
        OutputSelection s = new OutputSelection(PREFIX, 1, 1000);
        for (int i = 0; i < OutputSelection.MAX_LISTED + 500; i++) {
            s.skipped(String.format("link-%05d", i), FileListing.Skip.SYMBOLIC_LINK);
        }
        s.select();
        assertThat(s.left()).hasSize(OutputSelection.MAX_LISTED);
        assertThat(s.left().get(OutputSelection.MAX_LISTED - 1).path()).isEqualTo("link-00999");
        assertThat(s.leftCount()).isEqualTo(OutputSelection.MAX_LISTED + 500);
        assertThat(s.isComplete()).isTrue();
    }
}
