package io.rlscheduler.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Where the server and the token come from: flags, then the environment, then the config file. */
class RlsConfigTest {
    @TempDir
    Path home;

    private Path defaultFile() throws Exception {
        Path file = home.resolve(".config/rls/config.properties");
        Files.createDirectories(file.getParent());
        return file;
    }

    @Test
    void defaultsWithNothingConfigured() {
        Config c = Config.resolve(null, null, Map.of(), home);
        assertThat(c.server()).isEqualTo("http://127.0.0.1:8080");
        assertThat(c.token()).isNull();
    }

    @Test
    void theDefaultFileIsReadWhenNothingElseSaysSo() throws Exception {
        Files.writeString(defaultFile(), "# lab\nserver = http://gpu-master:8080/\ntoken=rls_file\n");
        Config c = Config.resolve(null, null, Map.of(), home);
        assertThat(c.server()).isEqualTo("http://gpu-master:8080");
        assertThat(c.token()).isEqualTo("rls_file");
        assertThat(c.tokenSource()).endsWith("config.properties");
    }

    @Test
    void theEnvironmentBeatsTheFileAndFlagsBeatTheEnvironment() throws Exception {
        Files.writeString(defaultFile(), "server=http://file:1\ntoken=rls_file\n");
        Map<String, String> env = Map.of("RLS_SERVER", "http://env:2", "RLS_TOKEN", "rls_env");
        Config fromEnv = Config.resolve(null, null, env, home);
        assertThat(fromEnv.server()).isEqualTo("http://env:2");
        assertThat(fromEnv.token()).isEqualTo("rls_env");
        Config fromFlags = Config.resolve("http://flag:3", "rls_flag", env, home);
        assertThat(fromFlags.server()).isEqualTo("http://flag:3");
        assertThat(fromFlags.token()).isEqualTo("rls_flag");
        assertThat(fromFlags.tokenSource()).isEqualTo("--token");
    }

    @Test
    void eachSettingFallsBackOnItsOwn() throws Exception {
        Files.writeString(defaultFile(), "server=http://file:1\ntoken=rls_file\n");
        Config c = Config.resolve(null, null, Map.of("RLS_TOKEN", "rls_env"), home);
        assertThat(c.server()).isEqualTo("http://file:1");
        assertThat(c.token()).isEqualTo("rls_env");
        Config d = Config.resolve("flag:4", null, Map.of(), home);
        assertThat(d.server()).isEqualTo("http://flag:4");
        assertThat(d.token()).isEqualTo("rls_file");
    }

    @Test
    void rlsConfigNamesAnotherFile() throws Exception {
        Files.writeString(defaultFile(), "server=http://default:1\n");
        Path other = home.resolve("lab.properties");
        Files.writeString(other, "server=https://lab.example:8443\ntoken=rls_lab\n");
        Map<String, String> env = new HashMap<>();
        env.put("RLS_CONFIG", other.toString());
        Config c = Config.resolve(null, null, env, home);
        assertThat(c.server()).isEqualTo("https://lab.example:8443");
        assertThat(c.token()).isEqualTo("rls_lab");
        env.put("RLS_CONFIG", home.resolve("missing.properties").toString());
        assertThatThrownBy(() -> Config.resolve(null, null, env, home))
                .isInstanceOf(RlsException.class).hasMessageContaining("RLS_CONFIG");
    }

    @Test
    void emptyValuesCountAsUnset() throws Exception {
        Files.writeString(defaultFile(), "server=http://file:1\ntoken=\n");
        Config c = Config.resolve("", " ", Map.of("RLS_SERVER", ""), home);
        assertThat(c.server()).isEqualTo("http://file:1");
        assertThat(c.token()).isNull();
    }

    @Test
    void aServerMustBeHttp() {
        assertThatThrownBy(() -> Config.resolve("ftp://x", null, Map.of(), home)).isInstanceOf(RlsException.class);
    }
}
