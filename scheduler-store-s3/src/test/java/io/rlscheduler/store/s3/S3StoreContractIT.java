package io.rlscheduler.store.s3;

import io.rlscheduler.store.ArtifactStore;
import io.rlscheduler.store.ArtifactStoreContract;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The store contract against a real S3 server, s3proxy, on both of its backends: one server per
 * backend, a fresh prefix per test. The transient backend's stores have a store prefix of their
 * own per test (every key is stored under it); the filesystem backend's are at the bucket's
 * root, each test using keys under a prefix of its own.
 */
class S3StoreContractIT {

    /** The contract on one server; each test gets a store of its own. */
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    abstract static class OnServer extends ArtifactStoreContract {

        @RegisterExtension
        final S3ProxyServer server;
        private final AtomicInteger tests = new AtomicInteger();
        private S3Store store;
        private String prefix;

        OnServer(S3ProxyServer.Backend backend) {
            server = S3ProxyServer.of(backend);
        }

        /** Returns the store prefix of the n-th test. */
        abstract String storePrefix(int test);

        /** Returns the key prefix of the n-th test. */
        abstract String keyPrefix(int test);

        @BeforeEach
        void openStore() {
            int n = tests.incrementAndGet();
            store = server.store(storePrefix(n));
            prefix = keyPrefix(n);
        }

        @AfterEach
        void closeStore() {
            store.close();
        }

        @Override
        protected ArtifactStore store() {
            return store;
        }

        @Override
        protected String prefix() {
            return prefix;
        }
    }

    @Nested
    class TransientBackend extends OnServer {
        TransientBackend() {
            super(S3ProxyServer.Backend.TRANSIENT);
        }

        @Override
        String storePrefix(int test) {
            return "runs/lab-" + test;
        }

        @Override
        String keyPrefix(int test) {
            return "p";
        }
    }

    @Nested
    class FilesystemBackend extends OnServer {
        FilesystemBackend() {
            super(S3ProxyServer.Backend.FILESYSTEM);
        }

        @Override
        String storePrefix(int test) {
            return "";
        }

        @Override
        String keyPrefix(int test) {
            return "t-" + test;
        }
    }
}
