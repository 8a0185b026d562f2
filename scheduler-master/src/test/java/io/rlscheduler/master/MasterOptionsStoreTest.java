package io.rlscheduler.master;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The master's artifact store settings: the default beside the log directory, parsing, and settings kept private. No I/O. */
class MasterOptionsStoreTest {

    @Test
    void theDefaultStoreIsADirectoryNamedArtifactsInTheLogDirectorysParent() {
        MasterOptions options = MasterOptions.builder().logDirectory(Path.of("/srv/rls/logs")).build();
        assertThat(options.getArtifactStore()).isEqualTo(Path.of("/srv/rls/artifacts").toUri());
        assertThat(options.getArtifactStoreSettings()).isEmpty();
        assertThat(MasterOptions.defaults().getArtifactStore()).as("the relative default log directory, made absolute")
                .isEqualTo(Path.of(MasterOptions.DEFAULT_ARTIFACT_STORE_DIRECTORY).toAbsolutePath().toUri());
        assertThat(options.mutate().logDirectory(Path.of("/data/logs")).build().getArtifactStore())
                .as("a default store follows the log directory it is beside")
                .isEqualTo(Path.of("/data/artifacts").toUri());
    }

    @Test
    void aStoreIsAUriOrAPathAndStaysWhereItWasSetWhenTheLogDirectoryMoves() {
        MasterOptions s3 = MasterOptions.builder().artifactStore("s3://runs/lab?path-style=true").build();
        assertThat(s3.getArtifactStore()).isEqualTo(URI.create("s3://runs/lab?path-style=true"));
        MasterOptions path = MasterOptions.builder().artifactStore("/mnt/shared/../shared/runs").build();
        assertThat(path.getArtifactStore()).isEqualTo(Path.of("/mnt/shared/runs").toUri());
        assertThat(path.mutate().logDirectory(Path.of("/elsewhere/logs")).build().getArtifactStore())
                .isEqualTo(Path.of("/mnt/shared/runs").toUri());
        assertThatThrownBy(() -> MasterOptions.builder().artifactStore(" ")).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("artifact store");
        assertThatThrownBy(() -> MasterOptions.builder().artifactStore("s3://bad uri"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("s3://bad uri");
    }

    @Test
    void settingsAreCopiedAndTheirValuesNeverPrinted() {
        Map<String, String> settings = new HashMap<>(Map.of("secret-key", "hunter2-very-secret", "region", "eu-west-1"));
        MasterOptions options = MasterOptions.builder().artifactStoreSettings(settings).build();
        settings.put("region", "changed");
        assertThat(options.getArtifactStoreSettings()).containsEntry("region", "eu-west-1").hasSize(2);
        assertThatThrownBy(() -> options.getArtifactStoreSettings().put("x", "y"))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThat(options.toString()).contains("secret-key").doesNotContain("hunter2-very-secret");
        assertThat(options.mutate().build().getArtifactStoreSettings()).isEqualTo(options.getArtifactStoreSettings());
        Map<String, String> withNull = new HashMap<>();
        withNull.put("access-key", null);
        assertThatThrownBy(() -> MasterOptions.builder().artifactStoreSettings(withNull))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("access-key");
    }
}
