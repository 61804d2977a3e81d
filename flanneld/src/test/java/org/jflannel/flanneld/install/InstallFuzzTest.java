package org.jflannel.flanneld.install;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * The install path of the image's init containers. {@link #pluginFileInstall}: the one-file plugin
 * (launcher, ustar payload, trailer) that {@code install-cni-plugin} unpacks into the host's
 * /opt/cni/bin. The input is the payload (the trailer is appended, naming it) or, when its first byte
 * is 'T', the whole file (the trailer fuzzed too). Properties: {@link CniPluginInstaller#install} installs
 * or throws an IOException naming the cause, never another exception; whatever it creates lies inside
 * the destination, symbolic links included (none points out of it). {@link #cniConfInstall}: the
 * kube-flannel ConfigMap's cni-conf.json copied to 10-flannel.conflist: the destination holds exactly
 * the source's bytes, and a second install changes nothing.
 */
class InstallFuzzTest {
    private static final Path ROOT = tempRoot();

    @FuzzTest(maxDuration = "5m")
    void pluginFileInstall(byte[] input) throws IOException {
        Path source = ROOT.resolve("src");
        Path dest = ROOT.resolve("dest");
        clean(ROOT);
        Files.createDirectories(source);
        byte[] file;
        if (input.length > 0 && input[0] == 'T') {
            file = Arrays.copyOfRange(input, 1, input.length);
        } else {
            byte[] launcher = "#!launcher\n".getBytes(StandardCharsets.US_ASCII);
            ByteBuffer f = ByteBuffer.allocate(launcher.length + input.length + PluginFile.TRAILER_SIZE).order(ByteOrder.LITTLE_ENDIAN);
            f.put(launcher).put(input).put(PluginFile.MAGIC.getBytes(StandardCharsets.US_ASCII))
                    .putLong(launcher.length).putLong(input.length).put("0123456789ab".getBytes(StandardCharsets.US_ASCII))
                    .put(new byte[PluginFile.TRAILER_SIZE - 8 - 8 - 8 - 12]);
            file = f.array();
        }
        Files.write(source.resolve(CniPluginInstaller.LAUNCHER), file);
        try {
            CniPluginInstaller.install(source, dest);
        } catch (IOException refused) {
            if (refused.getMessage() == null || !refused.getMessage().startsWith("install-cni-plugin:")) {
                throw new AssertionError("a refusal that does not say what refused", refused);
            }
        }
        try (Stream<Path> all = Files.walk(ROOT)) {
            for (Path p : (Iterable<Path>) all::iterator) {
                if (!p.startsWith(source) && !p.startsWith(dest) && !p.equals(ROOT)) {
                    throw new AssertionError("created outside the destination: " + p);
                }
                if (Files.isSymbolicLink(p)) {
                    Path target = p.getParent().resolve(Files.readSymbolicLink(p)).normalize();
                    if (!target.startsWith(dest)) {
                        throw new AssertionError("a symbolic link out of the destination: " + p + " -> " + target);
                    }
                }
            }
        }
    }

    @FuzzTest(maxDuration = "5m")
    void cniConfInstall(byte[] input) throws IOException {
        clean(ROOT);
        Path src = Files.write(ROOT.resolve("cni-conf.json"), input);
        Path dest = ROOT.resolve("net.d").resolve("10-flannel.conflist");
        Files.createDirectories(dest.getParent());
        if (!CniConfInstaller.install(src, dest).changed()) {
            throw new AssertionError("a first install changed nothing");
        }
        if (!Arrays.equals(Files.readAllBytes(dest), input)) {
            throw new AssertionError("the destination differs from the source");
        }
        if (CniConfInstaller.install(src, dest).changed()) {
            throw new AssertionError("a second install of the same bytes rewrote the file");
        }
    }

    private static Path tempRoot() {
        try {
            Path root = Files.createTempDirectory("install-fuzz");
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                clean(root);
                root.toFile().delete();
            }));
            return root;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void clean(Path dir) {
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).filter(p -> !p.equals(dir)).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static boolean exists(Path p) {
        return Files.exists(p, LinkOption.NOFOLLOW_LINKS);
    }
}
