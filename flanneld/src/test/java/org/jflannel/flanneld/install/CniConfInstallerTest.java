package org.jflannel.flanneld.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CniConfInstallerTest {
    @TempDir
    Path tmp;

    @Test
    void replacesAtomicallyAndIsIdempotent() throws IOException {
        Path src = Files.writeString(tmp.resolve("cni-conf.json"), "{\"name\":\"cbr0\",\"cniVersion\":\"1.0.0\"}");
        Path dest = tmp.resolve("etc/cni/net.d/10-flannel.conflist");
        Files.createDirectories(dest.getParent());
        Files.writeString(dest, "old");
        long oldInode = (long) Files.getAttribute(dest, "unix:ino");

        assertThat(CniConfInstaller.install(src, dest).changed()).isTrue();
        assertThat(Files.readString(dest)).isEqualTo(Files.readString(src));
        // replaced by rename, not rewritten in place: a reader holding the old file still reads "old"
        assertThat((long) Files.getAttribute(dest, "unix:ino")).isNotEqualTo(oldInode);
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dest))).isEqualTo("rw-r--r--");

        long inode = (long) Files.getAttribute(dest, "unix:ino");
        assertThat(CniConfInstaller.install(src, dest).changed()).isFalse();
        assertThat((long) Files.getAttribute(dest, "unix:ino")).isEqualTo(inode);
        try (Stream<Path> s = Files.list(dest.getParent())) {
            assertThat(s.map(p -> p.getFileName().toString()).toList()).containsExactly("10-flannel.conflist");
        }
    }

    @Test
    void errorsNameThePath() throws IOException {
        Path missing = tmp.resolve("nope.json");
        assertThatThrownBy(() -> CniConfInstaller.install(missing, tmp.resolve("out")))
                .hasMessageContaining(missing.toString()).hasMessageContaining("does not exist");
        Path src = Files.writeString(tmp.resolve("c.json"), "{}");
        Path dir = Files.createDirectories(tmp.resolve("a-dir"));
        assertThatThrownBy(() -> CniConfInstaller.install(src, dir)).hasMessageContaining(dir.toString());
        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        assertThatThrownBy(() -> CniConfInstaller.install(src, file.resolve("10-flannel.conflist")))
                .hasMessageContaining(file.resolve("10-flannel.conflist").toString());
    }

    @Test
    void commandLineExitCodesAndMessages() throws IOException {
        Path src = Files.writeString(tmp.resolve("c.json"), "{}");
        Path dest = tmp.resolve("net.d/10-flannel.conflist");
        ByteArrayOutputStream buf = new ByteArrayOutputStream();
        PrintStream err = new PrintStream(buf, true, StandardCharsets.UTF_8);

        assertThat(InstallCommand.run(List.of("install-cni-conf", src.toString(), dest.toString()), Map.of(), err)).contains(0);
        assertThat(InstallCommand.run(List.of("install-cni-conf", src.toString()), Map.of(), err)).contains(2);
        assertThat(InstallCommand.run(List.of("install-cni-conf", tmp.resolve("x").toString(), dest.toString()), Map.of(), err)).contains(1);
        assertThat(InstallCommand.run(List.of("install-cni-plugin", tmp.resolve("d").toString()),
                Map.of("JFLANNEL_CNI_BUNDLE", tmp.resolve("no-bundle").toString()), err)).contains(1);
        assertThat(InstallCommand.run(List.of("--ip-masq"), Map.of(), err)).isEmpty();
        assertThat(buf.toString(StandardCharsets.UTF_8))
                .contains("install-cni-conf: installed dest=" + dest)
                .contains("usage: flanneld install-cni-conf SRC DEST")
                .contains(tmp.resolve("x").toString())
                .contains(tmp.resolve("no-bundle").toString());
    }
}
