package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.Map;
import org.jflannel.core.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The private key file as upstream keeps it: created once (0400 in a 0700 directory), then reused. */
class KeyFileTest {
    @TempDir
    Path tmp;

    @Test
    void defaultPathAndTheEnvironmentOverride() {
        assertThat(KeyFile.path(Map.of())).isEqualTo(Path.of("/run/flannel/wgkey"));
        assertThat(KeyFile.path(Map.of("WIREGUARD_KEY_FILE", "/etc/wg/k"))).isEqualTo(Path.of("/etc/wg/k"));
        assertThat(KeyFile.path(Map.of("WIREGUARD_KEY_FILE", ""))).isEqualTo(Path.of("/run/flannel/wgkey"));
    }

    @Test
    void createdOnceThenReused() throws Exception {
        Path file = tmp.resolve("run/flannel/wgkey");
        byte[] first = KeyFile.loadOrCreate(file, new SecureRandom());
        assertThat(Files.getPosixFilePermissions(file)).isEqualTo(PosixFilePermissions.fromString("r--------"));
        assertThat(Files.getPosixFilePermissions(file.getParent())).isEqualTo(PosixFilePermissions.fromString("rwx------"));
        assertThat(Files.readString(file)).isEqualTo(Base64.getEncoder().encodeToString(first));
        assertThat((first[0] & 7) == 0 && (first[31] & 0xc0) == 0x40).as("clamped as wg genkey writes").isTrue();
        assertThat(KeyFile.loadOrCreate(file, new SecureRandom())).isEqualTo(first);
    }

    @Test
    void aKeyWrittenByWgGenkeyWithNewlineIsRead() throws Exception {
        Path file = tmp.resolve("wgkey");
        byte[] key = new byte[32];
        key[0] = 8;
        Files.writeString(file, Base64.getEncoder().encodeToString(key) + "\n");
        assertThat(KeyFile.loadOrCreate(file, new SecureRandom())).isEqualTo(key);
    }

    @Test
    void aBrokenKeyFileStopsStartUpNamingTheVariable() throws Exception {
        Path file = tmp.resolve("wgkey");
        Files.writeString(file, "c2hvcnQ=");
        assertThatThrownBy(() -> KeyFile.loadOrCreate(file, new SecureRandom())).isInstanceOf(ConfigException.class)
                .hasMessageContaining("incorrect key size: 5").hasMessageContaining(file.toString())
                .extracting(e -> ((ConfigException) e).field()).isEqualTo("WIREGUARD_KEY_FILE");
        Files.writeString(file, "!!!");
        assertThatThrownBy(() -> KeyFile.loadOrCreate(file, new SecureRandom())).isInstanceOf(ConfigException.class)
                .hasMessageContaining("failed to parse base64-encoded key");
    }
}
