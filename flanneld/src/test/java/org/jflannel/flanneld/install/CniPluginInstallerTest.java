package org.jflannel.flanneld.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CniPluginInstallerTest {
    @TempDir
    Path tmp;

    /** An image-like source: launcher naming its bundle, bundle with a runtime-like tree. */
    private Path source(String name, String hash, String jarContent) throws IOException {
        Path src = Files.createDirectories(tmp.resolve(name));
        String bundle = "jflannel-" + hash;
        Files.writeString(src.resolve("flannel"), "#!/bin/sh\ndir=\"${0%/*}/" + bundle + "\"\nexec \"$dir/jre/bin/java\"\n");
        Files.setPosixFilePermissions(src.resolve("flannel"), PosixFilePermissions.fromString("rwxr-xr-x"));
        Path java = Files.createDirectories(src.resolve(bundle).resolve("jre/bin")).resolve("java");
        Files.writeString(java, "#!/bin/sh\necho java\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(src.resolve(bundle).resolve("cni-flannel.jar"), jarContent);
        return src;
    }

    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> !n.equals(".jflannel-install.lock")).sorted().toList();
        }
    }

    @Test
    void installsBundleThenLauncherAndSecondRunRewritesNothing() throws IOException {
        Path src = source("v1", "aaaaaaaaaaaa", "jar v1");
        Path dest = tmp.resolve("opt/cni/bin");

        CniPluginInstaller.Result first = CniPluginInstaller.install(src, dest);

        assertThat(first.bundleCopied()).isTrue();
        assertThat(first.launcherChanged()).isTrue();
        assertThat(names(dest)).containsExactly("flannel", "jflannel-aaaaaaaaaaaa");
        assertThat(Files.isExecutable(dest.resolve("flannel"))).isTrue();
        assertThat(Files.isExecutable(dest.resolve("jflannel-aaaaaaaaaaaa/jre/bin/java"))).isTrue();
        assertThat(Files.readString(dest.resolve("jflannel-aaaaaaaaaaaa/cni-flannel.jar"))).isEqualTo("jar v1");

        FileTime launcherTime = Files.getLastModifiedTime(dest.resolve("flannel"));
        long launcherInode = (long) Files.getAttribute(dest.resolve("flannel"), "unix:ino");
        CniPluginInstaller.Result second = CniPluginInstaller.install(src, dest);

        assertThat(second.bundleCopied()).isFalse();
        assertThat(second.launcherChanged()).isFalse();
        assertThat(second.removed()).isEmpty();
        assertThat(Files.getLastModifiedTime(dest.resolve("flannel"))).isEqualTo(launcherTime);
        assertThat((long) Files.getAttribute(dest.resolve("flannel"), "unix:ino")).isEqualTo(launcherInode);
    }

    /** The one-file plugin: launcher bytes, a payload larger than 64 KiB, then the 48-byte trailer naming the bundle. */
    private static void oneFilePlugin(Path file, String hash) throws IOException {
        java.nio.ByteBuffer trailer = java.nio.ByteBuffer.allocate(48).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        trailer.put("JFLNPAY1".getBytes(java.nio.charset.StandardCharsets.US_ASCII)).putLong(16).putLong(100_000)
                .put(hash.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        byte[] content = new byte[16 + 100_000 + 48];
        System.arraycopy(trailer.array(), 0, content, content.length - 48, 48);
        Files.write(file, content);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    @Test
    void upgradeFromTheOneFilePluginKeepsTheBundleItsTrailerNames() throws IOException {
        Path dest = tmp.resolve("bin1");
        Path v1 = source("f1", "444444444444", "jar v1");
        oneFilePlugin(v1.resolve("flannel"), "444444444444");
        CniPluginInstaller.install(v1, dest);
        CniPluginInstaller.install(source("f2", "555555555555", "jar v2"), dest);
        Path v3 = source("f3", "666666666666", "jar v3");
        oneFilePlugin(v3.resolve("flannel"), "666666666666");
        assertThat(CniPluginInstaller.namedBundle(v3.resolve("flannel"))).contains("jflannel-666666666666");

        CniPluginInstaller.Result third = CniPluginInstaller.install(v3, dest);

        assertThat(third.launcherChanged()).isTrue();
        assertThat(third.removed()).containsExactly("jflannel-444444444444");
        assertThat(Files.mismatch(dest.resolve("flannel"), v3.resolve("flannel"))).isEqualTo(-1L);
        assertThat(CniPluginInstaller.namedBundle(dest.resolve("flannel"))).contains("jflannel-666666666666");
    }

    @Test
    void upgradeKeepsThePreviousBundleAndRemovesOlderOnes() throws IOException {
        Path dest = tmp.resolve("bin");
        CniPluginInstaller.install(source("v1", "111111111111", "jar v1"), dest);
        CniPluginInstaller.install(source("v2", "222222222222", "jar v2"), dest);
        assertThat(names(dest)).containsExactly("flannel", "jflannel-111111111111", "jflannel-222222222222");
        assertThat(Files.readString(dest.resolve("flannel"))).contains("jflannel-222222222222");

        CniPluginInstaller.Result third = CniPluginInstaller.install(source("v3", "333333333333", "jar v3"), dest);

        // v2 was the launcher's until now: kept for an ADD that started it; v1 goes
        assertThat(third.removed()).containsExactly("jflannel-111111111111");
        assertThat(names(dest)).containsExactly("flannel", "jflannel-222222222222", "jflannel-333333333333");
        assertThat(Files.readString(dest.resolve("flannel"))).contains("jflannel-333333333333");
    }

    @Test
    void replacesADamagedBundleAndLeavesNoTemporaryDirectories() throws IOException {
        Path src = source("v1", "aaaaaaaaaaaa", "jar v1");
        Path dest = tmp.resolve("bin");
        CniPluginInstaller.install(src, dest);
        Files.writeString(dest.resolve("jflannel-aaaaaaaaaaaa/cni-flannel.jar"), "trunc");
        Files.createDirectory(dest.resolve(".jflannel-tmp-12345")); // an install killed mid-copy

        CniPluginInstaller.Result r = CniPluginInstaller.install(src, dest);

        assertThat(r.bundleCopied()).isTrue();
        assertThat(Files.readString(dest.resolve("jflannel-aaaaaaaaaaaa/cni-flannel.jar"))).isEqualTo("jar v1");
        assertThat(names(dest)).containsExactly("flannel", "jflannel-aaaaaaaaaaaa");
    }

    @Test
    void leavesOtherPluginsAlone() throws IOException {
        Path dest = Files.createDirectories(tmp.resolve("bin"));
        Files.writeString(dest.resolve("bridge"), "bridge");
        Files.createDirectory(dest.resolve("jflannel")); // the repository launcher's layout: not ours to remove
        CniPluginInstaller.install(source("v1", "aaaaaaaaaaaa", "jar"), dest);
        CniPluginInstaller.install(source("v2", "bbbbbbbbbbbb", "jar"), dest);
        CniPluginInstaller.install(source("v3", "cccccccccccc", "jar"), dest);
        assertThat(names(dest)).contains("bridge", "jflannel");
    }

    @Test
    void errorsNameThePath() throws IOException {
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        assertThatThrownBy(() -> CniPluginInstaller.install(empty, tmp.resolve("d")))
                .hasMessageContaining(empty.toString()).hasMessageContaining("no launcher flannel");

        Path src = source("v1", "aaaaaaaaaaaa", "jar");
        Files.createDirectory(src.resolve("jflannel-bbbbbbbbbbbb"));
        assertThatThrownBy(() -> CniPluginInstaller.install(src, tmp.resolve("d")))
                .hasMessageContaining(src.toString()).hasMessageContaining("exactly one");

        Path good = source("v2", "cccccccccccc", "jar");
        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        assertThatThrownBy(() -> CniPluginInstaller.install(good, file))
                .hasMessageContaining(file.toString()).hasMessageContaining("not a directory");
        assertThatThrownBy(() -> CniPluginInstaller.install(good, file.resolve("sub")))
                .hasMessageContaining(file.resolve("sub").toString());
    }
}
