package io.rlscheduler.store.s3;

import io.rlscheduler.store.StoreKeys;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

/**
 * Immutable settings of an {@link S3Store}. Thread-safe; share one instance. Built with
 * {@link #builder(String)}, or parsed from a store URI and its settings by {@link #parse} (what
 * {@code ArtifactStores.open} does through {@link S3StoreProvider}).
 *
 * <pre>
 *  setting              default                        unit / range
 *  -------------------  -----------------------------  ------------------------------------------
 *  (bucket)             required: the URI's host       3-63 of [a-z0-9.-_], starting and ending
 *                                                      with a letter or digit
 *  (prefix)             none: the URI's path           a key ({@link StoreKeys}); every object
 *                                                      of the store is stored under prefix/
 *  endpoint             the AWS endpoint of the region http(s) URI; MinIO, Ceph RGW, s3proxy
 *  region               the SDK's region chain (the    an AWS region name, as eu-west-1
 *                       aws.region property, the
 *                       AWS_REGION variable, the
 *                       profile file, and without an
 *                       endpoint the instance's
 *                       metadata); us-east-1 when an
 *                       endpoint is given and the
 *                       chain names none
 *  path-style           true with an endpoint, false   true: http://host/bucket/key; false:
 *                       without                        http://bucket.host/key
 *  access-key           the AWS credentials chain      with secret-key, or neither
 *  secret-key           the AWS credentials chain      with access-key, or neither; never part of
 *                                                      {@link #toUri()} or {@link #toString()}
 *  part-size            16 MiB                         bytes, 5 MiB to 1 GiB; also the range of
 *                                                      one GET of a large object (raised for a
 *                                                      file of more than 10,000 parts)
 *  parallelism          4                              concurrent part transfers per file, 1-64
 *  multipart-threshold  32 MiB                         bytes, 5 MiB to 1 GiB: a file larger than
 *                                                      this is sent in parts (and got in ranges);
 *                                                      one up to it in one request
 * </pre>
 *
 * <p>Sizes are bytes, written as a plain number or with a {@code KiB}, {@code MiB} or {@code GiB}
 * suffix ({@code 16MiB}). One transfer of a large file holds {@code parallelism × part-size} bytes
 * of heap (64 MiB with the defaults), and a file sent in one request its whole size.
 */
public final class S3StoreOptions {

    /** The setting {@value}: the S3 endpoint to use instead of AWS's. */
    public static final String ENDPOINT = "endpoint";
    /** The setting {@value}: the region requests are signed for. */
    public static final String REGION = "region";
    /** The setting {@value}: whether the bucket is a path segment rather than a host name. */
    public static final String PATH_STYLE = "path-style";
    /** The setting {@value}: the access key id of static credentials. */
    public static final String ACCESS_KEY = "access-key";
    /** The setting {@value}: the secret of static credentials. */
    public static final String SECRET_KEY = "secret-key";
    /** The setting {@value}: bytes per part of a multipart upload or ranged download. */
    public static final String PART_SIZE = "part-size";
    /** The setting {@value}: concurrent part transfers per file. */
    public static final String PARALLELISM = "parallelism";
    /** The setting {@value}: the size above which a file is transferred in parts. */
    public static final String MULTIPART_THRESHOLD = "multipart-threshold";

    /** Every setting {@link #parse} knows. */
    public static final List<String> SETTINGS = List.of(ENDPOINT, REGION, PATH_STYLE, ACCESS_KEY, SECRET_KEY,
            PART_SIZE, PARALLELISM, MULTIPART_THRESHOLD);

    /** The smallest part S3 accepts (but for the last): 5 MiB. */
    public static final long MIN_PART_SIZE = 5L << 20;
    /** The largest part or threshold taken: 1 GiB (a part is held in one array). */
    public static final long MAX_PART_SIZE = 1L << 30;
    /** The most concurrent part transfers per file: {@value}. */
    public static final int MAX_PARALLELISM = 64;

    public static final long DEFAULT_PART_SIZE = 16L << 20;
    public static final int DEFAULT_PARALLELISM = 4;
    public static final long DEFAULT_MULTIPART_THRESHOLD = 32L << 20;
    /** The region used with an endpoint when the region chain names none. */
    public static final String DEFAULT_ENDPOINT_REGION = "us-east-1";

    private static final Pattern BUCKET = Pattern.compile("[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]");
    private static final Pattern REGION_NAME = Pattern.compile("[a-z0-9-]{1,64}");
    private static final Pattern SIZE = Pattern.compile("([0-9]{1,19})\\s*(KiB|MiB|GiB)?");

    private final String bucket;
    private final String prefix;
    private final URI endpoint;
    private final String region;
    private final Boolean pathStyle;
    private final String accessKey;
    private final String secretKey;
    private final long partSize;
    private final int parallelism;
    private final long multipartThreshold;

    private S3StoreOptions(Builder b) {
        this.bucket = b.bucket;
        this.prefix = b.prefix;
        this.endpoint = b.endpoint;
        this.region = b.region;
        this.pathStyle = b.pathStyle;
        this.accessKey = b.accessKey;
        this.secretKey = b.secretKey;
        this.partSize = b.partSize;
        this.parallelism = b.parallelism;
        this.multipartThreshold = b.multipartThreshold;
    }

    /**
     * Returns a builder for a store in {@code bucket}, every other setting at its default.
     *
     * @throws IllegalArgumentException if the bucket name is invalid
     */
    public static Builder builder(String bucket) {
        return new Builder(bucket);
    }

    /**
     * Parses a store URI, {@code s3://bucket/prefix}, and its settings (the table above, by the
     * names of the constants of this class).
     *
     * @param uri      the store's URI; its query is ignored (the caller merges it into settings)
     * @param settings the settings
     * @throws IllegalArgumentException naming the setting, if one is unknown or its value invalid,
     *                                  or if the URI is not an s3: URI of a bucket
     */
    public static S3StoreOptions parse(URI uri, Map<String, String> settings) {
        Objects.requireNonNull(uri, "uri");
        if (!"s3".equalsIgnoreCase(uri.getScheme())) {
            throw new IllegalArgumentException("an S3 store URI starts with s3://, was " + uri);
        }
        if (uri.getRawUserInfo() != null) {
            throw new IllegalArgumentException("an S3 store URI carries no credentials (use the "
                    + ACCESS_KEY + " and " + SECRET_KEY + " settings or the AWS chain): s3://" + uri.getHost() + uri.getRawPath());
        }
        if (uri.getRawFragment() != null) {
            throw new IllegalArgumentException("an S3 store URI has no fragment: " + uri);
        }
        String authority = uri.getRawAuthority();
        if (authority == null || authority.isEmpty()) {
            throw new IllegalArgumentException("an S3 store URI names its bucket, as s3://bucket/prefix, was " + uri);
        }
        Builder b = builder(authority);
        String path = uri.getPath() == null ? "" : uri.getPath();
        String prefix = path.replaceAll("^/+", "").replaceAll("/+$", "");
        if (!prefix.isEmpty()) {
            b.prefix(prefix);
        }
        for (Map.Entry<String, String> e : Objects.requireNonNull(settings, "settings").entrySet()) {
            b.setting(e.getKey(), e.getValue());
        }
        return b.build();
    }

    /** Returns a builder holding these settings. */
    public Builder mutate() {
        Builder b = new Builder(bucket);
        b.prefix = prefix;
        b.endpoint = endpoint;
        b.region = region;
        b.pathStyle = pathStyle;
        b.accessKey = accessKey;
        b.secretKey = secretKey;
        b.partSize = partSize;
        b.parallelism = parallelism;
        b.multipartThreshold = multipartThreshold;
        return b;
    }

    /** Returns the bucket. */
    public String getBucket() { return bucket; }
    /** Returns the key prefix every object is stored under, or "" for none. */
    public String getPrefix() { return prefix; }
    /** Returns the endpoint, or null for AWS's. */
    public URI getEndpoint() { return endpoint; }
    /** Returns the region given, or null when the region chain decides. */
    public String getRegion() { return region; }
    /** Returns whether requests name the bucket in the path: as set, else whether an endpoint is given. */
    public boolean isPathStyle() { return pathStyle != null ? pathStyle : endpoint != null; }
    /** Returns the access key id of static credentials, or null for the AWS credentials chain. */
    public String getAccessKey() { return accessKey; }
    /** Returns the secret of static credentials, or null for the AWS credentials chain: for the client only. */
    String getSecretKey() { return secretKey; }
    /** Returns the part size in bytes. */
    public long getPartSize() { return partSize; }
    /** Returns the concurrent part transfers per file. */
    public int getParallelism() { return parallelism; }
    /** Returns the size in bytes above which a file is transferred in parts. */
    public long getMultipartThreshold() { return multipartThreshold; }

    /**
     * Returns the store's URI with every setting that is not a default and not a credential in its
     * query: what another machine opens again with its own credentials.
     */
    public URI toUri() {
        Map<String, String> q = new LinkedHashMap<>();
        if (endpoint != null) {
            q.put(ENDPOINT, endpoint.toString());
        }
        if (region != null) {
            q.put(REGION, region);
        }
        if (pathStyle != null) {
            q.put(PATH_STYLE, pathStyle.toString());
        }
        if (partSize != DEFAULT_PART_SIZE) {
            q.put(PART_SIZE, Long.toString(partSize));
        }
        if (parallelism != DEFAULT_PARALLELISM) {
            q.put(PARALLELISM, Integer.toString(parallelism));
        }
        if (multipartThreshold != DEFAULT_MULTIPART_THRESHOLD) {
            q.put(MULTIPART_THRESHOLD, Long.toString(multipartThreshold));
        }
        StringBuilder s = new StringBuilder("s3://").append(bucket);
        if (!prefix.isEmpty()) {
            for (String segment : prefix.split("/")) {
                s.append('/').append(URLEncoder.encode(segment, StandardCharsets.UTF_8).replace("+", "%20"));
            }
        }
        char sep = '?';
        for (Map.Entry<String, String> e : q.entrySet()) {
            s.append(sep).append(e.getKey()).append('=').append(URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8));
            sep = '&';
        }
        try {
            return new URI(s.toString());
        } catch (URISyntaxException e) {
            throw new IllegalStateException("a store URI built from valid settings is valid: " + s, e);
        }
    }

    @Override
    public String toString() {
        return "S3StoreOptions{" + toUri() + (accessKey != null ? ", static credentials" : ", AWS credentials chain") + '}';
    }

    /** Builds {@link S3StoreOptions}; each setter validates at once. Not thread-safe. */
    public static final class Builder {
        private final String bucket;
        private String prefix = "";
        private URI endpoint;
        private String region;
        private Boolean pathStyle;
        private String accessKey;
        private String secretKey;
        private long partSize = DEFAULT_PART_SIZE;
        private int parallelism = DEFAULT_PARALLELISM;
        private long multipartThreshold = DEFAULT_MULTIPART_THRESHOLD;

        private Builder(String bucket) {
            Objects.requireNonNull(bucket, "bucket");
            if (!BUCKET.matcher(bucket).matches() || bucket.contains("..")) {
                throw new IllegalArgumentException("bucket must be 3 to 63 of [a-z0-9._-], starting and ending with a letter or digit, was '"
                        + bucket + "'");
            }
            this.bucket = bucket;
        }

        /** Sets the key prefix every object is stored under: a valid key ({@link StoreKeys}), or "" for none. */
        public Builder prefix(String prefix) {
            Objects.requireNonNull(prefix, "prefix");
            if (!prefix.isEmpty()) {
                try {
                    StoreKeys.check(prefix);
                } catch (IllegalArgumentException e) {
                    throw new IllegalArgumentException("prefix must be a valid artifact key: " + e.getMessage(), e);
                }
            }
            this.prefix = prefix;
            return this;
        }

        /** Sets the endpoint, an http or https URI with a host and no path beyond "/", or null for AWS's. */
        public Builder endpoint(URI endpoint) {
            if (endpoint != null) {
                String scheme = endpoint.getScheme() == null ? "" : endpoint.getScheme().toLowerCase(Locale.ROOT);
                if (!(scheme.equals("http") || scheme.equals("https")) || endpoint.getHost() == null
                        || endpoint.getRawUserInfo() != null || endpoint.getRawQuery() != null
                        || !(endpoint.getRawPath() == null || endpoint.getRawPath().isEmpty() || endpoint.getRawPath().equals("/"))) {
                    throw new IllegalArgumentException(ENDPOINT + " must be an http(s)://host[:port] URI, was '" + endpoint + "'");
                }
            }
            this.endpoint = endpoint;
            return this;
        }

        /** Sets the region (as {@code eu-west-1}), or null for the region chain. */
        public Builder region(String region) {
            if (region != null && !REGION_NAME.matcher(region).matches()) {
                throw new IllegalArgumentException(REGION + " must be a region name of [a-z0-9-], as eu-west-1, was '" + region + "'");
            }
            this.region = region;
            return this;
        }

        /** Sets path-style access, or null for its default (true with an endpoint). */
        public Builder pathStyle(Boolean pathStyle) {
            this.pathStyle = pathStyle;
            return this;
        }

        /**
         * Sets the access key id of static credentials, or null for the AWS credentials chain;
         * {@link #build()} requires {@link #secretKey} with it.
         */
        public Builder accessKey(String accessKey) {
            if (accessKey != null && accessKey.isBlank()) {
                throw new IllegalArgumentException(ACCESS_KEY + " must not be empty");
            }
            this.accessKey = accessKey;
            return this;
        }

        /**
         * Sets the secret of static credentials, or null for the AWS credentials chain;
         * {@link #build()} requires {@link #accessKey} with it.
         */
        public Builder secretKey(String secretKey) {
            if (secretKey != null && secretKey.isEmpty()) {
                throw new IllegalArgumentException(SECRET_KEY + " must not be empty");
            }
            this.secretKey = secretKey;
            return this;
        }

        /** Sets the part size: bytes, {@value #MIN_PART_SIZE} to {@value #MAX_PART_SIZE}. */
        public Builder partSize(long bytes) {
            this.partSize = checkSize(PART_SIZE, bytes);
            return this;
        }

        /** Sets the concurrent part transfers per file: 1 to {@value #MAX_PARALLELISM}. */
        public Builder parallelism(int parallelism) {
            if (parallelism < 1 || parallelism > MAX_PARALLELISM) {
                throw new IllegalArgumentException(PARALLELISM + " must be 1 to " + MAX_PARALLELISM + ", was " + parallelism);
            }
            this.parallelism = parallelism;
            return this;
        }

        /** Sets the multipart threshold: bytes, {@value #MIN_PART_SIZE} to {@value #MAX_PART_SIZE}. */
        public Builder multipartThreshold(long bytes) {
            this.multipartThreshold = checkSize(MULTIPART_THRESHOLD, bytes);
            return this;
        }

        /**
         * Sets one setting by its name (the constants of {@link S3StoreOptions}) from its text.
         *
         * @throws IllegalArgumentException naming the setting if it is unknown or its value invalid
         */
        public Builder setting(String name, String value) {
            Objects.requireNonNull(name, "name");
            if (value == null) {
                throw new IllegalArgumentException("setting '" + name + "' has no value");
            }
            switch (name) {
                case ENDPOINT:
                    try {
                        return endpoint(new URI(value));
                    } catch (URISyntaxException e) {
                        throw new IllegalArgumentException(ENDPOINT + " must be an http(s)://host[:port] URI, was '" + value + "'", e);
                    }
                case REGION:
                    return region(value);
                case PATH_STYLE:
                    return pathStyle(parseBoolean(PATH_STYLE, value));
                case ACCESS_KEY:
                    return accessKey(value);
                case SECRET_KEY:
                    return secretKey(value);
                case PART_SIZE:
                    return partSize(parseSize(PART_SIZE, value));
                case PARALLELISM:
                    return parallelism(parseInt(PARALLELISM, value));
                case MULTIPART_THRESHOLD:
                    return multipartThreshold(parseSize(MULTIPART_THRESHOLD, value));
                default:
                    throw new IllegalArgumentException("unknown setting '" + name + "' for an S3 store (known: "
                            + String.join(", ", SETTINGS) + ")");
            }
        }

        /**
         * Builds the options.
         *
         * @throws IllegalArgumentException if only one of the access key and the secret is set
         */
        public S3StoreOptions build() {
            if ((accessKey == null) != (secretKey == null)) {
                throw new IllegalArgumentException(ACCESS_KEY + " and " + SECRET_KEY + " are given together or not at all");
            }
            if (!prefix.isEmpty()) {
                int bytes = prefix.getBytes(StandardCharsets.UTF_8).length;
                if (bytes >= StoreKeys.MAX_KEY_BYTES) {
                    throw new IllegalArgumentException("prefix must be shorter than " + StoreKeys.MAX_KEY_BYTES + " bytes, was " + bytes);
                }
            }
            return new S3StoreOptions(this);
        }

        private static long checkSize(String name, long bytes) {
            if (bytes < MIN_PART_SIZE || bytes > MAX_PART_SIZE) {
                throw new IllegalArgumentException(name + " must be 5 MiB (5242880 bytes) to 1 GiB (1073741824 bytes), was " + bytes);
            }
            return bytes;
        }

        private static boolean parseBoolean(String name, String value) {
            if (value.equals("true") || value.equals("false")) {
                return Boolean.parseBoolean(value);
            }
            throw new IllegalArgumentException(name + " must be true or false, was '" + value + "'");
        }

        private static int parseInt(String name, String value) {
            try {
                return Integer.parseInt(value.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " must be a whole number, was '" + value + "'", e);
            }
        }

        private static long parseSize(String name, String value) {
            var m = SIZE.matcher(value.trim());
            if (!m.matches()) {
                throw new IllegalArgumentException(name + " must be bytes, as 16777216 or 16MiB, was '" + value + "'");
            }
            long n;
            try {
                n = Long.parseLong(m.group(1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + " is too large: '" + value + "'", e);
            }
            int shift = m.group(2) == null ? 0 : m.group(2).equals("KiB") ? 10 : m.group(2).equals("MiB") ? 20 : 30;
            if (n > (Long.MAX_VALUE >> shift)) {
                throw new IllegalArgumentException(name + " is too large: '" + value + "'");
            }
            return n << shift;
        }
    }
}
