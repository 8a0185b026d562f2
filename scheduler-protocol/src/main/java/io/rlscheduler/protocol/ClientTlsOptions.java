package io.rlscheduler.protocol;

import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Immutable TLS settings of a client (a worker's connections to its masters). Thread-safe; share
 * one instance.
 *
 * <pre>
 *  setting              default                  unit / range
 *  -------------------  -----------------------  -------------------------------------------------
 *  trustedCertificates  the JDK's trust store    PEM files of the CAs that sign the servers' certificates
 *  clientCertificate    none                     (chain, key) PEM files for mutual TLS: this client's
 *                                                  certificate first, then intermediates; its key,
 *                                                  unencrypted PKCS#8
 *  verifyHostname       true                     the server's certificate must name the host dialled
 * </pre>
 *
 * <p>Host name verification follows the rule of HTTPS (RFC 2818, the JDK's {@code "HTTPS"}
 * endpoint identification): the host the client dials (as configured, or as a standby names the
 * leader) must appear in the server certificate's subject alternative names, a DNS name (one
 * leading {@code *} wildcard allowed; the subject's CN only in a certificate without DNS names) for
 * a host name, an IP address for an address. Turn it off
 * only where the trusted CA signs nothing but these servers' certificates.
 *
 * <p>{@link Builder#build()} reads every file and checks it ({@link TlsConfigException}); the
 * options hold what was read. {@code toString()} names the files only.
 */
public final class ClientTlsOptions {

    /** Default: the server's certificate must name the host dialled. */
    public static final boolean DEFAULT_VERIFY_HOSTNAME = true;

    private final List<Path> trustedFiles;
    private final List<X509Certificate> trusted;
    private final CertifiedKey certifiedKey;
    private final boolean verifyHostname;

    private ClientTlsOptions(Builder b, List<X509Certificate> trusted, CertifiedKey certifiedKey) {
        this.trustedFiles = b.trustedFiles;
        this.trusted = trusted;
        this.certifiedKey = certifiedKey;
        this.verifyHostname = b.verifyHostname;
    }

    /** Returns a builder with every setting at its default. */
    public static Builder builder() {
        return new Builder();
    }

    /** Returns a builder holding these settings; its {@link Builder#build()} reads the files again. */
    public Builder mutate() {
        Builder b = new Builder();
        b.trustedFiles = trustedFiles;
        if (certifiedKey != null) {
            b.chainFile = certifiedKey.chainFile();
            b.keyFile = certifiedKey.keyFile();
        }
        b.verifyHostname = verifyHostname;
        return b;
    }

    /** Returns the PEM files of the CAs trusted to sign servers' certificates; empty for the JDK's trust store. */
    public List<Path> getTrustedCertificateFiles() {
        return trustedFiles;
    }

    /** Returns the PEM file of this client's certificate chain, or empty without a client certificate. */
    public Optional<Path> getCertificateChainFile() {
        return Optional.ofNullable(certifiedKey).map(CertifiedKey::chainFile);
    }

    /** Returns the PEM file of the client certificate's key, or empty without a client certificate. */
    public Optional<Path> getPrivateKeyFile() {
        return Optional.ofNullable(certifiedKey).map(CertifiedKey::keyFile);
    }

    /** Returns whether the server's certificate must name the host dialled. */
    public boolean isVerifyHostname() {
        return verifyHostname;
    }

    List<X509Certificate> trusted() {
        return trusted;
    }

    /** Returns the client certificate and key, or null without. */
    CertifiedKey certifiedKey() {
        return certifiedKey;
    }

    @Override
    public String toString() {
        return "ClientTlsOptions{trustedCertificates=" + (trustedFiles.isEmpty() ? "the JDK's" : trustedFiles)
                + ", " + (certifiedKey == null ? "no client certificate" : certifiedKey)
                + ", verifyHostname=" + verifyHostname + '}';
    }

    /** Builds {@link ClientTlsOptions}; {@link #build()} reads and checks the files. Not thread-safe. */
    public static final class Builder {
        private List<Path> trustedFiles = List.of();
        private Path chainFile;
        private Path keyFile;
        private boolean verifyHostname = DEFAULT_VERIFY_HOSTNAME;

        private Builder() {
        }

        /** Sets the PEM files of the CAs trusted to sign servers' certificates; default the JDK's trust store. */
        public Builder trustedCertificates(Path... files) {
            return trustedCertificates(Arrays.asList(Objects.requireNonNull(files, "files")));
        }

        /** Sets the PEM files of the CAs trusted to sign servers' certificates; default the JDK's trust store. */
        public Builder trustedCertificates(List<Path> files) {
            this.trustedFiles = CertifiedKey.files(files, "trusted certificates");
            return this;
        }

        /**
         * Sets the certificate this client presents (mutual TLS); default none.
         *
         * @param certificateChain PEM file: this client's certificate first, then its intermediates
         * @param privateKey       PEM file: that certificate's key, unencrypted PKCS#8
         */
        public Builder clientCertificate(Path certificateChain, Path privateKey) {
            this.chainFile = Objects.requireNonNull(certificateChain, "certificateChain");
            this.keyFile = Objects.requireNonNull(privateKey, "privateKey");
            return this;
        }

        /** Sets whether the server's certificate must name the host dialled; default true. */
        public Builder verifyHostname(boolean verify) {
            this.verifyHostname = verify;
            return this;
        }

        /**
         * Reads the files and returns the options.
         *
         * @throws TlsConfigException if a file cannot be used
         */
        public ClientTlsOptions build() {
            List<X509Certificate> trusted = CertifiedKey.trusted(trustedFiles);
            return new ClientTlsOptions(this, trusted, chainFile == null ? null : CertifiedKey.load(chainFile, keyFile));
        }
    }
}
