package org.jflannel.flanneld.install;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
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

    /**
     * An image-like source: {@code flannel} as packaging/plugin-file.sh writes it (launcher bytes, an
     * ustar archive of the bundle made by tar itself, the trailer naming the bundle).
     */
    private Path source(String name, String hash, String jarContent) throws IOException, InterruptedException {
        Path stage = Files.createDirectories(tmp.resolve("stage-" + name));
        Path java = Files.createDirectories(stage.resolve("jre/bin")).resolve("java");
        Files.writeString(java, "#!/bin/sh\necho java\n");
        Files.setPosixFilePermissions(java, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(stage.resolve("cni-flannel.jar"), jarContent);
        Files.setLastModifiedTime(stage.resolve("cni-flannel.jar"), JAR_TIME);
        Files.createSymbolicLink(stage.resolve("jre/bin/javaw"), Path.of("java"));
        return onefile(name, hash, List.of("tar", "--format=ustar", "--sort=name", "--owner=0", "--group=0", "--numeric-owner",
                "-cf", "-", "-C", stage.toString(), "."));
    }

    private static final FileTime JAR_TIME = FileTime.fromMillis(1_700_000_000_000L);

    /** Launcher bytes + the archive {@code archiver} writes on stdout + the trailer: the one-file plugin in {@code tmp/name/flannel}. */
    private Path onefile(String name, String hash, List<String> archiver) throws IOException, InterruptedException {
        Path src = Files.createDirectories(tmp.resolve(name));
        Process p = new ProcessBuilder(archiver).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        byte[] payload = p.getInputStream().readAllBytes();
        assertThat(p.waitFor()).as("%s", archiver).isZero();
        byte[] launcher = "\177ELF launcher bytes".getBytes(StandardCharsets.US_ASCII);
        ByteBuffer trailer = ByteBuffer.allocate(48).order(ByteOrder.LITTLE_ENDIAN);
        trailer.put("JFLNPAY1".getBytes(StandardCharsets.US_ASCII)).putLong(launcher.length).putLong(payload.length)
                .put(hash.getBytes(StandardCharsets.US_ASCII));
        Path file = src.resolve("flannel");
        try (var out = Files.newOutputStream(file)) {
            out.write(launcher);
            out.write(payload);
            out.write(trailer.array());
        }
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
        return src;
    }

    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> !n.equals(".jflannel-install.lock")).sorted().toList();
        }
    }

    @Test
    void installsBundleThenLauncherAndSecondRunRewritesNothing() throws Exception {
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

    @Test
    void unpacksModesTimesAndLinksAsArchived() throws Exception {
        Path dest = tmp.resolve("bin0");
        CniPluginInstaller.install(source("t1", "777777777777", "jar"), dest);
        Path bundle = dest.resolve("jflannel-777777777777");
        // the plugin's class-data archive refuses a jar whose mtime changed: the archive's time is kept
        assertThat(Files.getLastModifiedTime(bundle.resolve("cni-flannel.jar"))).isEqualTo(JAR_TIME);
        assertThat(Files.getPosixFilePermissions(bundle.resolve("jre/bin/java"))).isEqualTo(PosixFilePermissions.fromString("rwxr-xr-x"));
        assertThat(Files.readSymbolicLink(bundle.resolve("jre/bin/javaw"))).isEqualTo(Path.of("java"));
        assertThat(Files.getPosixFilePermissions(bundle)).contains(java.nio.file.attribute.PosixFilePermission.OTHERS_EXECUTE);
    }

    @Test
    void upgradeFromAnOlderShellLauncherKeepsTheBundleItNames() throws Exception {
        Path dest = Files.createDirectories(tmp.resolve("bin1"));
        Files.writeString(dest.resolve("flannel"), "#!/bin/sh\ndir=\"${0%/*}/jflannel-444444444444\"\nexec \"$dir/jre/bin/java\"\n");
        Files.createDirectories(dest.resolve("jflannel-444444444444/jre/bin"));
        Files.createDirectories(dest.resolve("jflannel-333333333333/jre/bin"));

        CniPluginInstaller.Result r = CniPluginInstaller.install(source("f3", "666666666666", "jar v3"), dest);

        assertThat(r.launcherChanged()).isTrue();
        assertThat(r.removed()).containsExactly("jflannel-333333333333");
        assertThat(CniPluginInstaller.namedBundle(dest.resolve("flannel"))).contains("jflannel-666666666666");
        assertThat(names(dest)).containsExactly("flannel", "jflannel-444444444444", "jflannel-666666666666");
    }

    @Test
    void aPayloadEntryLeavingTheBundleIsRefusedAndNothingIsWritten() throws Exception {
        String evil = "import io, sys, tarfile\n"
                + "t = tarfile.open(fileobj=sys.stdout.buffer, mode='w|', format=tarfile.USTAR_FORMAT)\n"
                + "i = tarfile.TarInfo('./../escaped'); d = b'x'; i.size = len(d); t.addfile(i, io.BytesIO(d)); t.close()\n";
        Path src = onefile("evil", "888888888888", List.of("python3", "-c", evil));
        Path dest = tmp.resolve("bin2");

        assertThatThrownBy(() -> CniPluginInstaller.install(src, dest))
                .hasMessageContaining(src.resolve("flannel").toString()).hasMessageContaining("./../escaped")
                .hasMessageContaining("leaves the bundle");
        assertThat(tmp.resolve("escaped")).doesNotExist();
        assertThat(dest).doesNotExist();

        String hardlink = "import io, sys, tarfile\n"
                + "t = tarfile.open(fileobj=sys.stdout.buffer, mode='w|', format=tarfile.USTAR_FORMAT)\n"
                + "i = tarfile.TarInfo('./a'); i.type = tarfile.LNKTYPE; i.linkname = './b'; t.addfile(i); t.close()\n";
        Path src2 = onefile("hard", "999999999999", List.of("python3", "-c", hardlink));
        assertThatThrownBy(() -> CniPluginInstaller.install(src2, dest)).hasMessageContaining("typeflag '1'");
    }

    @Test
    void upgradeKeepsThePreviousBundleAndRemovesOlderOnes() throws Exception {
        Path dest = tmp.resolve("bin");
        CniPluginInstaller.install(source("v1", "111111111111", "jar v1"), dest);
        CniPluginInstaller.install(source("v2", "222222222222", "jar v2"), dest);
        assertThat(names(dest)).containsExactly("flannel", "jflannel-111111111111", "jflannel-222222222222");
        assertThat(CniPluginInstaller.namedBundle(dest.resolve("flannel"))).contains("jflannel-222222222222");

        CniPluginInstaller.Result third = CniPluginInstaller.install(source("v3", "333333333333", "jar v3"), dest);

        // v2 was the launcher's until now: kept for an ADD that started it; v1 goes
        assertThat(third.removed()).containsExactly("jflannel-111111111111");
        assertThat(names(dest)).containsExactly("flannel", "jflannel-222222222222", "jflannel-333333333333");
        assertThat(CniPluginInstaller.namedBundle(dest.resolve("flannel"))).contains("jflannel-333333333333");
    }

    @Test
    void replacesADamagedBundleAndLeavesNoTemporaryDirectories() throws Exception {
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
    void leavesOtherPluginsAlone() throws Exception {
        Path dest = Files.createDirectories(tmp.resolve("bin"));
        Files.writeString(dest.resolve("bridge"), "bridge");
        Files.createDirectory(dest.resolve("jflannel")); // the repository launcher's layout: not ours to remove
        CniPluginInstaller.install(source("v1", "aaaaaaaaaaaa", "jar"), dest);
        CniPluginInstaller.install(source("v2", "bbbbbbbbbbbb", "jar"), dest);
        CniPluginInstaller.install(source("v3", "cccccccccccc", "jar"), dest);
        assertThat(names(dest)).contains("bridge", "jflannel");
    }

    @Test
    void errorsNameThePath() throws Exception {
        Path empty = Files.createDirectories(tmp.resolve("empty"));
        assertThatThrownBy(() -> CniPluginInstaller.install(empty, tmp.resolve("d")))
                .hasMessageContaining(empty.toString()).hasMessageContaining("no launcher flannel");

        Path shell = Files.createDirectories(tmp.resolve("shell"));
        Files.writeString(shell.resolve("flannel"), "#!/bin/sh\nexec java\n");
        assertThatThrownBy(() -> CniPluginInstaller.install(shell, tmp.resolve("d")))
                .hasMessageContaining(shell.resolve("flannel").toString()).hasMessageContaining("not a one-file plugin");

        Path good = source("v2", "cccccccccccc", "jar");
        Path file = Files.writeString(tmp.resolve("a-file"), "x");
        assertThatThrownBy(() -> CniPluginInstaller.install(good, file))
                .hasMessageContaining(file.toString()).hasMessageContaining("not a directory");
        assertThatThrownBy(() -> CniPluginInstaller.install(good, file.resolve("sub")))
                .hasMessageContaining(file.resolve("sub").toString());
    }
}
