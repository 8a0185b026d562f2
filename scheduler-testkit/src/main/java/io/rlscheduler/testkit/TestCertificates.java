package io.rlscheduler.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.Key;
import java.security.KeyStore;
import java.security.PrivateKey;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A throw-away certificate authority and the certificates it signs, for tests and benchmarks of
 * TLS: made with the JDK's {@code keytool} run as a process (EC P-256 keys, valid for 3 days), then
 * turned into the PEM files the TLS settings read: each key's PKCS#8 encoding as
 * {@code -----BEGIN PRIVATE KEY-----}, each certificate as {@code -----BEGIN CERTIFICATE-----}.
 * Everything lives in the directory given (a test's temporary directory); nothing is committed.
 *
 * <pre>{@code
 * TestCertificates ca = TestCertificates.create(dir);
 * TestCertificates.Issued master = ca.issue("master", "localhost", "dns:localhost", "ip:127.0.0.1");
 * TestCertificates.Issued worker = ca.issue("w1", "w1");
 * }</pre>
 *
 * <p>Not thread-safe; each {@code keytool} run takes about a second.
 */
public final class TestCertificates {

    private static final String PASSWORD = "test-keystore";
    private static final long KEYTOOL_TIMEOUT_SECONDS = 120;

    private final Path dir;
    private final String caName;
    private final Path caStore;
    private final Path caCertificate;
    private final Certificate ca;

    private TestCertificates(Path dir, String caName, Path caStore, Path caCertificate, Certificate ca) {
        this.dir = dir;
        this.caName = caName;
        this.caStore = caStore;
        this.caCertificate = caCertificate;
        this.ca = ca;
    }

    /** The PEM files of one issued certificate: its chain (the certificate, then the CA's) and its key. */
    public record Issued(Path certificateChain, Path privateKey) {
    }

    /** Makes a CA named "test-ca" in {@code dir} (created if missing). */
    public static TestCertificates create(Path dir) {
        return create(dir, "test-ca");
    }

    /** Makes a CA of the given common name in {@code dir} (created if missing); its files begin with that name. */
    public static TestCertificates create(Path dir, String caName) {
        try {
            Files.createDirectories(dir);
            Path store = dir.resolve(caName + ".p12");
            keytool("-genkeypair", "-alias", "ca", "-keyalg", "EC", "-groupname", "secp256r1",
                    "-dname", "CN=" + caName, "-ext", "bc:c", "-validity", "3",
                    "-keystore", store.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD);
            Certificate ca = load(store).getCertificate("ca");
            Path pem = dir.resolve(caName + ".pem");
            Files.writeString(pem, pem("CERTIFICATE", ca.getEncoded()), StandardCharsets.US_ASCII);
            return new TestCertificates(dir, caName, store, pem, ca);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot read the CA keytool made", e);
        }
    }

    /** Returns the PEM file of the CA's certificate: what a peer trusts. */
    public Path caCertificate() {
        return caCertificate;
    }

    /**
     * Issues a certificate signed by this CA.
     *
     * @param name             file name prefix, unique in this CA's directory
     * @param commonName       the subject's CN
     * @param subjectAltNames  keytool's SAN entries, such as {@code "dns:localhost"}, {@code "ip:127.0.0.1"}
     */
    public Issued issue(String name, String commonName, String... subjectAltNames) {
        try {
            Path store = dir.resolve(name + ".p12");
            Path request = dir.resolve(name + ".csr");
            Path signed = dir.resolve(name + ".crt");
            keytool("-genkeypair", "-alias", "leaf", "-keyalg", "EC", "-groupname", "secp256r1",
                    "-dname", "CN=" + commonName, "-validity", "3",
                    "-keystore", store.toString(), "-storetype", "PKCS12", "-storepass", PASSWORD);
            keytool("-certreq", "-alias", "leaf", "-keystore", store.toString(), "-storepass", PASSWORD,
                    "-file", request.toString());
            List<String> gencert = new ArrayList<>(List.of("-gencert", "-alias", "ca", "-keystore", caStore.toString(),
                    "-storepass", PASSWORD, "-infile", request.toString(), "-outfile", signed.toString(), "-rfc",
                    "-validity", "3", "-ext", "eku=serverAuth,clientAuth"));
            if (subjectAltNames.length > 0) {
                gencert.add("-ext");
                gencert.add("san=" + String.join(",", subjectAltNames));
            }
            keytool(gencert.toArray(new String[0]));

            Certificate leaf;
            try (InputStream in = Files.newInputStream(signed)) {
                leaf = CertificateFactory.getInstance("X.509").generateCertificate(in);
            }
            Key key = load(store).getKey("leaf", PASSWORD.toCharArray());
            if (!(key instanceof PrivateKey)) {
                throw new IllegalStateException("keytool's store " + store + " holds no private key");
            }
            Path chain = dir.resolve(name + "-chain.pem");
            Path keyFile = dir.resolve(name + "-key.pem");
            Files.writeString(chain, pem("CERTIFICATE", leaf.getEncoded()) + pem("CERTIFICATE", ca.getEncoded()),
                    StandardCharsets.US_ASCII);
            Files.writeString(keyFile, pem("PRIVATE KEY", key.getEncoded()), StandardCharsets.US_ASCII);
            return new Issued(chain, keyFile);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot read what keytool made for " + name, e);
        }
    }

    @Override
    public String toString() {
        return "TestCertificates{" + caName + " in " + dir + '}';
    }

    /** Returns DER bytes as one PEM block of the given label. */
    public static String pem(String label, byte[] der) {
        return "-----BEGIN " + label + "-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + label + "-----\n";
    }

    private static KeyStore load(Path store) throws IOException, GeneralSecurityException {
        KeyStore keyStore = KeyStore.getInstance("PKCS12");
        try (InputStream in = Files.newInputStream(store)) {
            keyStore.load(in, PASSWORD.toCharArray());
        }
        return keyStore;
    }

    private static void keytool(String... args) throws IOException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        command.add("-noprompt");
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        byte[] output;
        try (InputStream in = process.getInputStream()) {
            output = in.readAllBytes();
        }
        try {
            if (!process.waitFor(KEYTOOL_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IllegalStateException("keytool did not finish within " + KEYTOOL_TIMEOUT_SECONDS + " s: " + command);
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while keytool ran", e);
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException("keytool failed (exit " + process.exitValue() + "): " + command + "\n"
                    + new String(output, StandardCharsets.UTF_8));
        }
    }
}
