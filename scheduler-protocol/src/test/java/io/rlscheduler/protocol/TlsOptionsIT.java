package io.rlscheduler.protocol;

import io.rlscheduler.testkit.TestCertificates;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The TLS settings read their PEM files at build, with certificates made by keytool: good files
 * build, and every kind of bad file or setting is refused there with a typed error naming the
 * file and what to do.
 */
class TlsOptionsIT {

    @TempDir
    static Path dir;
    private static TestCertificates ca;
    private static TestCertificates.Issued server;
    private static TestCertificates.Issued other;

    @BeforeAll
    static void makeCertificates() {
        ca = TestCertificates.create(dir.resolve("ca"));
        server = ca.issue("server", "localhost", "dns:localhost");
        other = ca.issue("other", "other");
    }

    @Test
    void goodFilesBuildAndTheOptionsNameTheFilesButNeverTheKey() throws Exception {
        ServerTlsOptions options = serverBuilder().clientAuth(ClientAuthMode.REQUIRE)
                .trustedCertificates(ca.caCertificate()).build();
        assertThat(options.certifiedKey().chain()).hasSize(2);
        assertThat(options.trusted()).hasSize(1);
        assertThat(options.toString()).contains(server.privateKey().toString()).doesNotContain("PRIVATE KEY")
                .doesNotContain(Files.readString(server.privateKey()).lines().skip(1).findFirst().orElseThrow());
        assertThat(options.mutate().build().getClientAuth()).isEqualTo(ClientAuthMode.REQUIRE);
        assertThat(TlsContext.forServer(options, Duration.ofSeconds(1)).isServer()).isTrue();

        ClientTlsOptions client = ClientTlsOptions.builder().trustedCertificates(ca.caCertificate())
                .clientCertificate(other.certificateChain(), other.privateKey()).build();
        assertThat(client.isVerifyHostname()).isTrue();
        assertThat(client.getCertificateChainFile()).contains(other.certificateChain());
        assertThat(TlsContext.forClient(client, Duration.ofSeconds(1)).isServer()).isFalse();
        assertThat(ClientTlsOptions.builder().build().getTrustedCertificateFiles()).as("the JDK's trust store").isEmpty();
    }

    @Test
    void aMissingFileOrADirectoryIsUnreadable() {
        Path missing = dir.resolve("no-such.pem");
        assertProblem(() -> serverWith(missing, server.privateKey()), TlsConfigException.Problem.UNREADABLE_FILE, missing)
                .hasMessageContaining("does not exist");
        assertProblem(() -> serverWith(server.certificateChain(), dir), TlsConfigException.Problem.UNREADABLE_FILE, dir)
                .hasMessageContaining("is not a regular file");
        assertProblem(() -> ClientTlsOptions.builder().trustedCertificates(missing).build(),
                TlsConfigException.Problem.UNREADABLE_FILE, missing);
    }

    @Test
    void aFileOverOneMibIsRefusedUnread() throws Exception {
        Path huge = dir.resolve("huge.pem");
        Files.write(huge, new byte[(int) PemFiles.MAX_FILE_BYTES + 1]);
        assertProblem(() -> serverWith(huge, server.privateKey()), TlsConfigException.Problem.UNREADABLE_FILE, huge)
                .hasMessageContaining("more than any PEM file");
    }

    @Test
    void aFileWithoutThePemBlockItNeedsIsNotPem() throws Exception {
        Path garbage = write("garbage.pem", "this is not a certificate\n");
        assertProblem(() -> serverWith(garbage, server.privateKey()), TlsConfigException.Problem.NOT_PEM, garbage)
                .hasMessageContaining("holds no PEM block at all");
        Path der = dir.resolve("server.der");
        Files.write(der, new byte[] {0x30, (byte) 0x82, 0x01, 0x0a, 0x02, 0x01});
        assertProblem(() -> ClientTlsOptions.builder().trustedCertificates(der).build(), TlsConfigException.Problem.NOT_PEM, der)
                .hasMessageContaining("openssl x509 -inform der");
        // The key where the chain belongs, and the chain where the key belongs.
        assertProblem(() -> serverWith(server.privateKey(), server.privateKey()), TlsConfigException.Problem.NOT_PEM,
                server.privateKey()).hasMessageContaining("[PRIVATE KEY]");
        assertProblem(() -> serverWith(server.certificateChain(), server.certificateChain()),
                TlsConfigException.Problem.NOT_PEM, server.certificateChain()).hasMessageContaining("[CERTIFICATE]");
        Path notBase64 = write("not-base64.pem", "-----BEGIN CERTIFICATE-----\n%%%%\n-----END CERTIFICATE-----\n");
        assertProblem(() -> serverWith(notBase64, server.privateKey()), TlsConfigException.Problem.NOT_PEM, notBase64)
                .hasMessageContaining("not valid base64");
    }

    @Test
    void aCertificateBlockThatIsNotACertificateIsABadCertificate() throws Exception {
        Path bad = write("bad-cert.pem", TestCertificates.pem("CERTIFICATE", "not DER at all".getBytes(StandardCharsets.US_ASCII)));
        assertProblem(() -> serverWith(bad, server.privateKey()), TlsConfigException.Problem.BAD_CERTIFICATE, bad)
                .hasMessageContaining("certificate 1 cannot be read");
    }

    @Test
    void aPkcs1OrEncryptedOrDamagedKeyIsUnsupportedWithTheCommandThatConvertsIt() throws Exception {
        Path pkcs1 = write("rsa-key.pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIBOgIBAAJBAK\n-----END RSA PRIVATE KEY-----\n");
        assertProblem(() -> serverWith(server.certificateChain(), pkcs1), TlsConfigException.Problem.UNSUPPORTED_KEY, pkcs1)
                .hasMessageContaining("RSA PRIVATE KEY").hasMessageContaining("openssl pkcs8 -topk8 -nocrypt");
        Path sec1 = write("ec-key.pem", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEI\n-----END EC PRIVATE KEY-----\n");
        assertProblem(() -> serverWith(server.certificateChain(), sec1), TlsConfigException.Problem.UNSUPPORTED_KEY, sec1);
        Path encrypted = write("encrypted-key.pem", TestCertificates.pem("ENCRYPTED PRIVATE KEY", new byte[64]));
        assertProblem(() -> serverWith(server.certificateChain(), encrypted), TlsConfigException.Problem.UNSUPPORTED_KEY,
                encrypted).hasMessageContaining("encrypted");
        Path damaged = write("damaged-key.pem", TestCertificates.pem("PRIVATE KEY", new byte[48]));
        assertProblem(() -> serverWith(server.certificateChain(), damaged), TlsConfigException.Problem.UNSUPPORTED_KEY,
                damaged).hasMessageContaining("neither RSA, EC nor EdDSA");
        Path two = write("two-keys.pem", Files.readString(server.privateKey()) + Files.readString(other.privateKey()));
        assertProblem(() -> serverWith(server.certificateChain(), two), TlsConfigException.Problem.NOT_PEM, two)
                .hasMessageContaining("2 PEM private keys");
    }

    @Test
    void aKeyThatDoesNotBelongToTheFirstCertificateIsAMismatch() throws Exception {
        assertProblem(() -> serverWith(server.certificateChain(), other.privateKey()),
                TlsConfigException.Problem.KEY_MISMATCH, other.privateKey())
                .hasMessageContaining(server.certificateChain().toString()).hasMessageContaining("CN=localhost");
        assertProblem(() -> ClientTlsOptions.builder().clientCertificate(other.certificateChain(), server.privateKey())
                .build(), TlsConfigException.Problem.KEY_MISMATCH, server.privateKey());
        // The CA's certificate first: the chain's order matters.
        String[] parts = Files.readString(server.certificateChain()).split("(?=-----BEGIN CERTIFICATE-----)");
        Path reversed = write("reversed-chain.pem", parts[1] + parts[0]);
        assertProblem(() -> serverWith(reversed, server.privateKey()), TlsConfigException.Problem.KEY_MISMATCH,
                server.privateKey()).hasMessageContaining("must begin with the certificate of this key")
                .hasMessageContaining("CN=test-ca");
    }

    @Test
    void settingsThatDoNotFitTogetherAreRefusedAtBuild() {
        assertThatThrownBy(() -> ServerTlsOptions.builder(server.certificateChain(), null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("privateKey");
        assertThatThrownBy(() -> serverBuilder().clientAuth(ClientAuthMode.REQUIRE).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("trustedCertificates(...)");
        assertThatThrownBy(() -> serverBuilder().trustedCertificates(ca.caCertificate()).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("clientAuth NONE");
        assertThatThrownBy(() -> ClientTlsOptions.builder().clientCertificate(other.certificateChain(), null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("privateKey");
        assertThatThrownBy(() -> serverBuilder().trustedCertificates((Path) null))
                .isInstanceOf(NullPointerException.class);
        ServerTlsOptions good = serverBuilder().build();
        assertThatThrownBy(() -> TlsContext.forServer(good, Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("handshakeTimeout must be positive");
        assertThatThrownBy(() -> TlsContext.forServer(good, Duration.ofSeconds(1)).forPeer(null))
                .isInstanceOf(IllegalStateException.class);
    }

    private static ServerTlsOptions.Builder serverBuilder() {
        return ServerTlsOptions.builder(server.certificateChain(), server.privateKey());
    }

    private static ServerTlsOptions serverWith(Path chain, Path key) {
        return ServerTlsOptions.builder(chain, key).build();
    }

    private static Path write(String name, String text) throws Exception {
        return Files.writeString(dir.resolve(name), text, StandardCharsets.US_ASCII);
    }

    private static org.assertj.core.api.AbstractThrowableAssert<?, ? extends Throwable> assertProblem(
            org.assertj.core.api.ThrowableAssert.ThrowingCallable build, TlsConfigException.Problem problem, Path file) {
        return assertThatThrownBy(build).isInstanceOfSatisfying(TlsConfigException.class, e -> {
            assertThat(e.getProblem()).isEqualTo(problem);
            assertThat(e.getFile()).isEqualTo(file);
            assertThat(e.getMessage()).contains(file.toString());
        });
    }
}
