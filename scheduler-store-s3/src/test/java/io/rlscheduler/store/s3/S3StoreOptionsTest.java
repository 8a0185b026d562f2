package io.rlscheduler.store.s3;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

class S3StoreOptionsTest {

    private static S3StoreOptions parse(String uri, Map<String, String> settings) {
        return S3StoreOptions.parse(URI.create(uri), settings);
    }

    @Test
    void aBucketAloneTakesEveryDefault() {
        S3StoreOptions o = parse("s3://runs", Map.of());
        assertThat(o.getBucket()).isEqualTo("runs");
        assertThat(o.getPrefix()).isEmpty();
        assertThat(o.getEndpoint()).isNull();
        assertThat(o.getRegion()).isNull();
        assertThat(o.isPathStyle()).isFalse();
        assertThat(o.getAccessKey()).isNull();
        assertThat(o.getPartSize()).isEqualTo(16L << 20).isEqualTo(S3StoreOptions.DEFAULT_PART_SIZE);
        assertThat(o.getParallelism()).isEqualTo(4);
        assertThat(o.getMultipartThreshold()).isEqualTo(32L << 20);
        assertThat(o.toUri()).isEqualTo(URI.create("s3://runs"));
    }

    @Test
    void everySettingIsReadAndSizesTakeBinarySuffixes() {
        Map<String, String> s = new LinkedHashMap<>();
        s.put("endpoint", "http://minio.lab:9000");
        s.put("region", "eu-west-1");
        s.put("access-key", "AKIA1");
        s.put("secret-key", "s3cr3t");
        s.put("part-size", "8MiB");
        s.put("parallelism", "8");
        s.put("multipart-threshold", "67108864");
        S3StoreOptions o = parse("s3://runs/lab/2026/", s);
        assertThat(o.getPrefix()).isEqualTo("lab/2026");
        assertThat(o.getEndpoint()).isEqualTo(URI.create("http://minio.lab:9000"));
        assertThat(o.getRegion()).isEqualTo("eu-west-1");
        assertThat(o.isPathStyle()).as("path-style defaults to true with an endpoint").isTrue();
        assertThat(o.getAccessKey()).isEqualTo("AKIA1");
        assertThat(o.getSecretKey()).isEqualTo("s3cr3t");
        assertThat(o.getPartSize()).isEqualTo(8L << 20);
        assertThat(o.getParallelism()).isEqualTo(8);
        assertThat(o.getMultipartThreshold()).isEqualTo(64L << 20);
        assertThat(parse("s3://runs", Map.of("endpoint", "https://rgw.lab", "path-style", "false")).isPathStyle()).isFalse();
    }

    @Test
    void theUriCarriesEveryNonDefaultSettingButNoCredentialAndOpensTheSameStoreAgain() {
        S3StoreOptions o = parse("s3://runs/lab%20a/x", Map.of("endpoint", "http://127.0.0.1:9000", "path-style", "true",
                "access-key", "AKIA1", "secret-key", "s3cr3t", "parallelism", "2"));
        URI uri = o.toUri();
        assertThat(uri.toString()).doesNotContain("s3cr3t").doesNotContain("AKIA1").doesNotContain("key")
                .startsWith("s3://runs/lab%20a/x?");
        assertThat(o.toString()).doesNotContain("s3cr3t").doesNotContain("AKIA1");
        Map<String, String> query = new LinkedHashMap<>();
        for (String pair : uri.getRawQuery().split("&")) {
            String[] kv = pair.split("=", 2);
            query.put(kv[0], java.net.URLDecoder.decode(kv[1], java.nio.charset.StandardCharsets.UTF_8));
        }
        S3StoreOptions again = S3StoreOptions.parse(uri, query);
        assertThat(again.getPrefix()).isEqualTo("lab a/x");
        assertThat(again.getEndpoint()).isEqualTo(o.getEndpoint());
        assertThat(again.isPathStyle()).isTrue();
        assertThat(again.getParallelism()).isEqualTo(2);
        assertThat(again.getAccessKey()).isNull();
        assertThat(again.toUri()).isEqualTo(uri);
    }

    @Test
    void unknownSettingsAndBadValuesAreRefusedByName() {
        assertThatThrownBy(() -> parse("s3://runs", Map.of("colour", "red")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("unknown setting 'colour'")
                .hasMessageContaining("part-size");
        assertThatThrownBy(() -> parse("s3://runs", Map.of("part-size", "4MiB")))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("part-size must be 5 MiB");
        assertThatThrownBy(() -> parse("s3://runs", Map.of("part-size", "2GiB"))).hasMessageContaining("part-size");
        assertThatThrownBy(() -> parse("s3://runs", Map.of("part-size", "sixteen"))).hasMessageContaining("part-size must be bytes");
        assertThatThrownBy(() -> parse("s3://runs", Map.of("multipart-threshold", "1"))).hasMessageContaining("multipart-threshold");
        assertThatThrownBy(() -> parse("s3://runs", Map.of("parallelism", "0"))).hasMessageContaining("parallelism must be 1 to 64");
        assertThatThrownBy(() -> parse("s3://runs", Map.of("parallelism", "x"))).hasMessageContaining("parallelism must be a whole number");
        assertThatThrownBy(() -> parse("s3://runs", Map.of("path-style", "yes"))).hasMessageContaining("path-style must be true or false");
        assertThatThrownBy(() -> parse("s3://runs", Map.of("endpoint", "minio:9000"))).hasMessageContaining("endpoint must be");
        assertThatThrownBy(() -> parse("s3://runs", Map.of("endpoint", "http://minio:9000/bucket"))).hasMessageContaining("endpoint must be");
        assertThatThrownBy(() -> parse("s3://runs", Map.of("region", "EU West"))).hasMessageContaining("region must be");
        assertThatThrownBy(() -> parse("s3://runs", Map.of("access-key", "AKIA1")))
                .hasMessageContaining("access-key and secret-key are given together");
        assertThatThrownBy(() -> parse("s3://runs", Map.of("secret-key", "x")))
                .hasMessageContaining("access-key and secret-key are given together");
    }

    @Test
    void theUriNamesABucketAndCarriesNoCredentials() {
        assertThatThrownBy(() -> parse("file:/srv/runs", Map.of())).hasMessageContaining("starts with s3://");
        assertThatThrownBy(() -> parse("s3:///prefix", Map.of())).hasMessageContaining("names its bucket");
        assertThatThrownBy(() -> parse("s3://AKIA:secret@runs/p", Map.of()))
                .hasMessageContaining("carries no credentials").hasMessageNotContaining("secret@");
        assertThatThrownBy(() -> parse("s3://Runs_Upper/p", Map.of())).hasMessageContaining("bucket must be");
        assertThatThrownBy(() -> parse("s3://ab/p", Map.of())).hasMessageContaining("bucket must be");
        assertThatThrownBy(() -> parse("s3://runs/a/../b", Map.of())).hasMessageContaining("prefix must be a valid artifact key");
        assertThatThrownBy(() -> parse("s3://runs/.hidden", Map.of())).hasMessageContaining("prefix must be a valid artifact key");
    }
}
