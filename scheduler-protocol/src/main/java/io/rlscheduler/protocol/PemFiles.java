package io.rlscheduler.protocol;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the PEM files of the TLS settings: X.509 certificates ({@code -----BEGIN CERTIFICATE-----})
 * and unencrypted PKCS#8 private keys ({@code -----BEGIN PRIVATE KEY-----}) of RSA, EC or EdDSA, and
 * checks that a key belongs to its certificate. Every failure is a {@link TlsConfigException} that
 * names the file and, for a key in another form, the command that converts it. Stateless.
 */
final class PemFiles {

    /** The largest file read: PEM chains are a few KiB; this keeps a wrong path from filling memory. */
    static final long MAX_FILE_BYTES = 1024 * 1024;

    private static final Pattern BLOCK =
            Pattern.compile("-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \\1-----", Pattern.DOTALL);
    private static final Pattern WHITESPACE = Pattern.compile("\\s+");
    private static final String CONVERT_KEY = "convert it to unencrypted PKCS#8 with"
            + " 'openssl pkcs8 -topk8 -nocrypt -in OLD.pem -out key.pem' and protect the file by its permissions";
    /** Key factories tried in turn; the first that reads the PKCS#8 encoding names its algorithm. */
    private static final List<String> KEY_ALGORITHMS = List.of("RSA", "EC", "Ed25519", "Ed448");

    private PemFiles() {
    }

    /**
     * Returns the certificates of a PEM file, in file order; at least one.
     *
     * @param what the setting, for messages ("certificate chain", "trusted certificates")
     */
    static List<X509Certificate> certificates(Path file, String what) {
        List<String[]> blocks = blocks(file, what);
        List<X509Certificate> certificates = new ArrayList<>();
        CertificateFactory factory;
        try {
            factory = CertificateFactory.getInstance("X.509");
        } catch (CertificateException e) {
            throw new IllegalStateException("this JDK has no X.509 certificate factory", e);
        }
        for (String[] block : blocks) {
            if (!block[0].equals("CERTIFICATE")) {
                continue;
            }
            byte[] der = decode(file, what, block);
            try {
                certificates.add((X509Certificate) factory.generateCertificate(new ByteArrayInputStream(der)));
            } catch (CertificateException | ClassCastException e) {
                throw new TlsConfigException(TlsConfigException.Problem.BAD_CERTIFICATE, file, what + " file " + file
                        + ": certificate " + (certificates.size() + 1) + " cannot be read: " + e.getMessage(), e);
            }
        }
        if (certificates.isEmpty()) {
            throw new TlsConfigException(TlsConfigException.Problem.NOT_PEM, file, what + " file " + file
                    + " holds no PEM certificate (-----BEGIN CERTIFICATE-----)" + found(blocks));
        }
        return List.copyOf(certificates);
    }

    /** Returns the one private key of a PEM file. */
    static PrivateKey privateKey(Path file) {
        String what = "private key";
        List<String[]> blocks = blocks(file, what);
        List<String[]> keys = new ArrayList<>();
        for (String[] block : blocks) {
            switch (block[0]) {
                case "PRIVATE KEY" -> keys.add(block);
                case "ENCRYPTED PRIVATE KEY" -> throw new TlsConfigException(TlsConfigException.Problem.UNSUPPORTED_KEY,
                        file, "private key file " + file + " holds an encrypted key, which is not read: " + CONVERT_KEY);
                case "RSA PRIVATE KEY", "EC PRIVATE KEY", "DSA PRIVATE KEY" -> throw new TlsConfigException(
                        TlsConfigException.Problem.UNSUPPORTED_KEY, file, "private key file " + file + " holds a key"
                        + " of the form -----BEGIN " + block[0] + "----- (PKCS#1 or SEC 1), which is not read: " + CONVERT_KEY);
                default -> {
                }
            }
        }
        if (keys.size() != 1) {
            throw new TlsConfigException(TlsConfigException.Problem.NOT_PEM, file, "private key file " + file + " holds "
                    + keys.size() + " PEM private keys (-----BEGIN PRIVATE KEY-----), not one" + found(blocks));
        }
        PKCS8EncodedKeySpec spec = new PKCS8EncodedKeySpec(decode(file, what, keys.get(0)));
        for (String algorithm : KEY_ALGORITHMS) {
            try {
                return KeyFactory.getInstance(algorithm).generatePrivate(spec);
            } catch (GeneralSecurityException | IllegalArgumentException e) {
                // not this algorithm: try the next
            }
        }
        throw new TlsConfigException(TlsConfigException.Problem.UNSUPPORTED_KEY, file, "private key file " + file
                + " holds a PKCS#8 key that is neither RSA, EC nor EdDSA, or is damaged");
    }

    /**
     * Checks that {@code key} belongs to {@code certificate}: a signature made with the key must
     * verify with the certificate's public key.
     */
    static void requireMatches(PrivateKey key, Path keyFile, X509Certificate certificate, Path certificateFile) {
        String algorithm = switch (key.getAlgorithm()) {
            case "RSA" -> "SHA256withRSA";
            case "EC" -> "SHA256withECDSA";
            default -> "EdDSA";
        };
        byte[] probe = new byte[32];
        new SecureRandom().nextBytes(probe);
        boolean matches;
        try {
            Signature signer = Signature.getInstance(algorithm);
            signer.initSign(key);
            signer.update(probe);
            byte[] signature = signer.sign();
            Signature verifier = Signature.getInstance(algorithm);
            verifier.initVerify(certificate.getPublicKey());
            verifier.update(probe);
            matches = verifier.verify(signature);
        } catch (GeneralSecurityException e) {
            matches = false; // a key of another algorithm than the certificate's
        }
        if (!matches) {
            throw new TlsConfigException(TlsConfigException.Problem.KEY_MISMATCH, keyFile, "private key file " + keyFile
                    + " does not belong to the first certificate of " + certificateFile + " ("
                    + certificate.getSubjectX500Principal().getName() + "): the chain must begin with the certificate of"
                    + " this key");
        }
    }

    /** Returns the PEM blocks of a file as {label, base64 body}. */
    private static List<String[]> blocks(Path file, String what) {
        String text;
        try {
            if (!Files.isRegularFile(file)) {
                throw new TlsConfigException(TlsConfigException.Problem.UNREADABLE_FILE, file, what + " file " + file
                        + (Files.exists(file) ? " is not a regular file" : " does not exist"));
            }
            long size = Files.size(file);
            if (size > MAX_FILE_BYTES) {
                throw new TlsConfigException(TlsConfigException.Problem.UNREADABLE_FILE, file, what + " file " + file
                        + " is " + size + " bytes, more than any PEM file of certificates or a key (at most "
                        + MAX_FILE_BYTES + ")");
            }
            // Latin-1 maps every byte: a binary (DER) file reads as text without PEM blocks.
            text = Files.readString(file, StandardCharsets.ISO_8859_1);
        } catch (IOException e) {
            throw new TlsConfigException(TlsConfigException.Problem.UNREADABLE_FILE, file, what + " file " + file
                    + " cannot be read: " + e, e);
        }
        List<String[]> blocks = new ArrayList<>();
        Matcher m = BLOCK.matcher(text);
        while (m.find()) {
            blocks.add(new String[] {m.group(1), m.group(2)});
        }
        return blocks;
    }

    private static byte[] decode(Path file, String what, String[] block) {
        try {
            // Strict: the MIME decoder would skip characters that are not base64 and read garbage as empty.
            return Base64.getDecoder().decode(WHITESPACE.matcher(block[1]).replaceAll(""));
        } catch (IllegalArgumentException e) {
            throw new TlsConfigException(TlsConfigException.Problem.NOT_PEM, file, what + " file " + file + ": its "
                    + block[0] + " block is not valid base64: " + e.getMessage(), e);
        }
    }

    /** Names the kinds of block a file holds, for a message about the one it lacks. */
    private static String found(List<String[]> blocks) {
        if (blocks.isEmpty()) {
            return "; it holds no PEM block at all (a DER file? 'openssl x509 -inform der' and 'openssl pkcs8 -inform der'"
                    + " convert one)";
        }
        return "; it holds " + blocks.stream().map(b -> b[0]).distinct().toList();
    }
}
