package io.rlscheduler.protocol;

import java.nio.file.Path;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * A certificate chain and its private key, read from their PEM files and checked to belong
 * together: what a TLS endpoint presents. Immutable.
 */
record CertifiedKey(Path chainFile, Path keyFile, List<X509Certificate> chain, PrivateKey key) {

    CertifiedKey {
        chain = List.copyOf(chain);
    }

    /**
     * Reads a chain (its own certificate first) and the key of that certificate.
     *
     * @throws TlsConfigException if a file cannot be read, or the key does not belong to the chain
     */
    static CertifiedKey load(Path chainFile, Path keyFile) {
        List<X509Certificate> chain = PemFiles.certificates(chainFile, "certificate chain");
        PrivateKey key = PemFiles.privateKey(keyFile);
        PemFiles.requireMatches(key, keyFile, chain.get(0), chainFile);
        return new CertifiedKey(chainFile, keyFile, chain, key);
    }

    /** Reads the certificates of every file, in order. */
    static List<X509Certificate> trusted(List<Path> files) {
        List<X509Certificate> all = new ArrayList<>();
        for (Path file : files) {
            all.addAll(PemFiles.certificates(file, "trusted certificates"));
        }
        return List.copyOf(all);
    }

    /** Returns the files of a setter's arguments as a list, none null. */
    static List<Path> files(List<Path> files, String what) {
        Objects.requireNonNull(files, what);
        files.forEach(f -> Objects.requireNonNull(f, () -> "a file of " + what));
        return List.copyOf(files);
    }

    /** Names the files and never the key, for {@code toString()}. */
    @Override
    public String toString() {
        return "certificateChain=" + chainFile + ", privateKey=" + keyFile;
    }
}
