package io.rlscheduler.store.s3;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.regex.Pattern;

/** SHA-256 digests as the store writes them: 64 lower-case hex digits, kept in the object's {@value #METADATA} metadata. */
final class Sha256 {

    /** The user metadata that holds an object's SHA-256 (the header x-amz-meta-sha256). */
    static final String METADATA = "sha256";

    private static final Pattern HEX = Pattern.compile("[0-9a-f]{64}");

    private Sha256() {
    }

    static MessageDigest newDigest() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    /** Returns the digest's value as hex (the digest is reset). */
    static String hex(MessageDigest digest) {
        return HexFormat.of().formatHex(digest.digest());
    }

    /** Returns the value if it is a SHA-256 as the store writes it, else null (metadata written by others). */
    static String valid(String value) {
        return value != null && HEX.matcher(value).matches() ? value : null;
    }
}
