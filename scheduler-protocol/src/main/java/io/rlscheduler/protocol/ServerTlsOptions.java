package io.rlscheduler.protocol;

import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * Immutable TLS settings of a server port (the master's RPC port). Thread-safe; share one instance.
 *
 * <pre>
 *  setting              default   unit / range
 *  -------------------  --------  --------------------------------------------------------------
 *  certificateChain     required  builder(chain, key): PEM file, this server's certificate first,
 *                                   then intermediates
 *  privateKey           required  builder(chain, key): PEM file, that certificate's key,
 *                                   unencrypted PKCS#8 ("-----BEGIN PRIVATE KEY-----"; RSA, EC or EdDSA)
 *  clientAuth           NONE      ClientAuthMode: NONE, OPTIONAL or REQUIRE
 *  trustedCertificates  none      PEM files of the CAs whose client certificates are accepted;
 *                                   required unless clientAuth is NONE, refused with NONE
 * </pre>
 *
 * <p>{@link Builder#build()} reads every file and checks it: a missing or unreadable file, a file
 * without the PEM blocks the setting needs, a key in another form than unencrypted PKCS#8, or a key
 * that does not belong to the chain's first certificate is a {@link TlsConfigException}. The
 * options hold what was read, so a running server never reads these files again; to use new
 * certificates, build new options and start a new server. {@code toString()} names the files only.
 */
public final class ServerTlsOptions {

    /** Default client certificate mode: none asked for. */
    public static final ClientAuthMode DEFAULT_CLIENT_AUTH = ClientAuthMode.NONE;

    private final CertifiedKey certifiedKey;
    private final ClientAuthMode clientAuth;
    private final List<Path> trustedFiles;
    private final List<X509Certificate> trusted;

    private ServerTlsOptions(Builder b, CertifiedKey certifiedKey, List<X509Certificate> trusted) {
        this.certifiedKey = certifiedKey;
        this.clientAuth = b.clientAuth;
        this.trustedFiles = b.trustedFiles;
        this.trusted = trusted;
    }

    /**
     * Returns a builder of a server presenting this certificate; every other setting at its default.
     *
     * @param certificateChain PEM file: this server's certificate first, then its intermediates
     * @param privateKey       PEM file: that certificate's key, unencrypted PKCS#8
     */
    public static Builder builder(Path certificateChain, Path privateKey) {
        return new Builder(certificateChain, privateKey);
    }

    /** Returns a builder holding these settings; its {@link Builder#build()} reads the files again. */
    public Builder mutate() {
        Builder b = new Builder(certifiedKey.chainFile(), certifiedKey.keyFile());
        b.clientAuth = clientAuth;
        b.trustedFiles = trustedFiles;
        return b;
    }

    /** Returns the PEM file of this server's certificate chain. */
    public Path getCertificateChainFile() {
        return certifiedKey.chainFile();
    }

    /** Returns the PEM file of the private key. */
    public Path getPrivateKeyFile() {
        return certifiedKey.keyFile();
    }

    /** Returns whether clients are asked for a certificate. */
    public ClientAuthMode getClientAuth() {
        return clientAuth;
    }

    /** Returns the PEM files of the CAs whose client certificates are accepted; empty with {@link ClientAuthMode#NONE}. */
    public List<Path> getTrustedCertificateFiles() {
        return trustedFiles;
    }

    CertifiedKey certifiedKey() {
        return certifiedKey;
    }

    List<X509Certificate> trusted() {
        return trusted;
    }

    @Override
    public String toString() {
        return "ServerTlsOptions{" + certifiedKey + ", clientAuth=" + clientAuth + ", trustedCertificates="
                + trustedFiles + '}';
    }

    /** Builds {@link ServerTlsOptions}; {@link #build()} reads and checks the files. Not thread-safe. */
    public static final class Builder {
        private final Path chainFile;
        private final Path keyFile;
        private ClientAuthMode clientAuth = DEFAULT_CLIENT_AUTH;
        private List<Path> trustedFiles = List.of();

        private Builder(Path chainFile, Path keyFile) {
            this.chainFile = Objects.requireNonNull(chainFile, "certificateChain");
            this.keyFile = Objects.requireNonNull(keyFile, "privateKey");
        }

        /** Sets whether clients are asked for a certificate; default {@link ClientAuthMode#NONE}. */
        public Builder clientAuth(ClientAuthMode mode) {
            this.clientAuth = Objects.requireNonNull(mode, "mode");
            return this;
        }

        /** Sets the PEM files of the CAs whose client certificates are accepted; default none. */
        public Builder trustedCertificates(Path... files) {
            return trustedCertificates(Arrays.asList(Objects.requireNonNull(files, "files")));
        }

        /** Sets the PEM files of the CAs whose client certificates are accepted; default none. */
        public Builder trustedCertificates(List<Path> files) {
            this.trustedFiles = CertifiedKey.files(files, "trusted certificates");
            return this;
        }

        /**
         * Reads the files and returns the options.
         *
         * @throws IllegalStateException if the trusted certificates do not fit the client certificate mode
         * @throws TlsConfigException    if a file cannot be used
         */
        public ServerTlsOptions build() {
            if (clientAuth != ClientAuthMode.NONE && trustedFiles.isEmpty()) {
                throw new IllegalStateException("clientAuth " + clientAuth + " needs the CAs that sign client"
                        + " certificates: call trustedCertificates(...)");
            }
            if (clientAuth == ClientAuthMode.NONE && !trustedFiles.isEmpty()) {
                throw new IllegalStateException("trustedCertificates check client certificates, which clientAuth NONE"
                        + " never asks for: set clientAuth OPTIONAL or REQUIRE, or leave them out");
            }
            return new ServerTlsOptions(this, CertifiedKey.load(chainFile, keyFile), CertifiedKey.trusted(trustedFiles));
        }
    }
}
