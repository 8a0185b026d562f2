package io.rlscheduler.store;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Takes a real {@link DirectoryStore} down and brings it back, for drills of a store that is
 * down: its directory for new objects is moved aside in one rename (whatever is being written in
 * it at that moment) and a plain file put in its place, so every put fails as on a full or
 * read-only disk. File permissions would not do: the tests run as root in CI.
 */
public final class DirectoryStoreOutage {

    private DirectoryStoreOutage() {
    }

    /** Every put fails from now on, until {@link #end}. */
    public static void begin(DirectoryStore store) throws IOException {
        Path incoming = store.getRoot().resolve(DirectoryStore.INCOMING);
        Files.move(incoming, aside(store), StandardCopyOption.ATOMIC_MOVE);
        Files.writeString(incoming, "not a directory");
    }

    /** Puts work again. */
    public static void end(DirectoryStore store) throws IOException {
        Path incoming = store.getRoot().resolve(DirectoryStore.INCOMING);
        Files.delete(incoming);
        Files.move(aside(store), incoming, StandardCopyOption.ATOMIC_MOVE);
    }

    private static Path aside(DirectoryStore store) {
        return store.getRoot().resolve(".incoming-down");
    }
}
