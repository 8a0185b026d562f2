package io.rlscheduler.testkit;

import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * A key namespace of one test: a random name such as {@code rls-test-9f2c4e81a0b3d7c6}, unique
 * among tests, so that tests can share one Redis server (even an external one) without flushing
 * it and without seeing each other's keys.
 *
 * <p>Code under test is expected to put every key of a namespace under the hash tag
 * {@link #hashTag()} ({@code {rls-test-...}}), which keeps them in one cluster slot so that Lua
 * scripts may touch them together; {@link #key(String...)} builds such keys.
 * {@link RedisExtension} deletes the keys whose names contain {@link #name()} after each test
 * ({@link #keyPattern()}).
 *
 * <p>Immutable and thread-safe; equal by name.
 */
public final class RedisNamespace {

    /** Prefix of every {@link #random() random} name: {@code rls-test-}. */
    public static final String PREFIX = "rls-test-";

    private static final SecureRandom RANDOM = new SecureRandom();
    private static final Pattern VALID = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

    private final String name;

    private RedisNamespace(String name) {
        this.name = name;
    }

    /** Returns a new namespace named {@value #PREFIX} plus 64 random bits in hex. */
    public static RedisNamespace random() {
        byte[] bytes = new byte[8];
        RANDOM.nextBytes(bytes);
        return new RedisNamespace(PREFIX + HexFormat.of().formatHex(bytes));
    }

    /**
     * Returns the namespace with the given name.
     *
     * @param name 1 to 64 characters from {@code A-Z a-z 0-9 . _ : -}: none that would end a hash
     *     tag or act as a glob in {@link #keyPattern()}
     * @throws IllegalArgumentException if the name has other characters or length
     */
    public static RedisNamespace of(String name) {
        Objects.requireNonNull(name, "name");
        if (!VALID.matcher(name).matches()) {
            throw new IllegalArgumentException("Invalid namespace name '" + name
                    + "': use 1 to 64 characters from A-Z a-z 0-9 . _ : -");
        }
        return new RedisNamespace(name);
    }

    /** Returns the name, e.g. {@code rls-test-9f2c4e81a0b3d7c6}. */
    public String name() {
        return name;
    }

    /** Returns the hash tag: the name in braces, e.g. {@code {rls-test-9f2c4e81a0b3d7c6}}. */
    public String hashTag() {
        return '{' + name + '}';
    }

    /**
     * Returns a key in this namespace: the {@link #hashTag() hash tag} and the parts, joined by
     * {@code ':'}; e.g. {@code key("lease", "gpu-3")} gives {@code {rls-test-...}:lease:gpu-3}.
     * With no parts, returns the hash tag alone.
     */
    public String key(String... parts) {
        StringBuilder key = new StringBuilder(hashTag());
        for (String part : parts) {
            key.append(':').append(Objects.requireNonNull(part, "part"));
        }
        return key.toString();
    }

    /**
     * Returns the {@code SCAN MATCH} pattern for every key whose name contains this namespace's
     * name anywhere: {@code *name*}. Matching anywhere, not just as a prefix, also finds keys
     * laid out as {@code prefix:{name}:...}.
     */
    public String keyPattern() {
        return '*' + name + '*';
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof RedisNamespace && ((RedisNamespace) o).name.equals(name);
    }

    @Override
    public int hashCode() {
        return name.hashCode();
    }

    /** Returns the name. */
    @Override
    public String toString() {
        return name;
    }
}
