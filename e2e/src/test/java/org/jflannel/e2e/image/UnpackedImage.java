package org.jflannel.e2e.image;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.jflannel.testsupport.image.ImageRootfs;

/** The built image unpacked once per test class into a temp dir, removed after it. */
final class UnpackedImage implements AutoCloseable {
    private static final Pattern NEEDED = Pattern.compile("NEEDED\\s+(\\S+)");

    final Path dir;
    final Path rootfs;

    UnpackedImage() throws IOException, InterruptedException {
        dir = Files.createTempDirectory("jflannel-image-");
        boolean ok = false;
        try {
            rootfs = ImageRootfs.unpack(ImageRootfs.archive(), dir);
            ok = true;
        } finally {
            if (!ok) {
                ImageRootfs.delete(dir);
            }
        }
    }

    /** The image's CNI bundle directory name (jflannel-HASH): what its one-file plugin's trailer names (the image holds no unpacked copy). */
    String bundle() throws IOException {
        return trailerBundle(rootfs.resolve("opt/jflannel/cni/flannel"));
    }

    /**
     * The bundle as a node gets it: the image's plugin file copied into a directory of its own under
     * {@link #dir} and run once ({@code CNI_COMMAND=VERSION}), which unpacks its payload beside it.
     */
    Path unpackedBundle() throws IOException, InterruptedException {
        Path bin = dir.resolve("unpacked-plugin");
        Path bundle = bin.resolve(bundle());
        if (!Files.isDirectory(bundle)) {
            Files.createDirectories(bin);
            Files.copy(rootfs.resolve("opt/jflannel/cni/flannel"), bin.resolve("flannel"), java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
            org.jflannel.testsupport.cluster.Cmd.Result r = org.jflannel.testsupport.cluster.Cmd.run(java.time.Duration.ofMinutes(2),
                    List.of("env", "-i", "CNI_COMMAND=VERSION", bin.resolve("flannel").toString()), java.util.Map.of(),
                    "{\"cniVersion\":\"1.0.0\",\"name\":\"cbr0\",\"type\":\"flannel\"}");
            if (r.exitCode() != 0 || !Files.isDirectory(bundle)) {
                throw new IOException("the image's plugin file did not unpack " + bundle + ": exit " + r.exitCode() + " " + r.stdout() + r.stderr());
            }
        }
        return bundle;
    }

    /** The bundle a one-file plugin's trailer names (packaging/plugin-file.sh: "JFLNPAY1", offset, size, id). */
    static String trailerBundle(Path plugin) throws IOException {
        byte[] all;
        try (var ch = java.nio.channels.FileChannel.open(plugin)) {
            java.nio.ByteBuffer t = java.nio.ByteBuffer.allocate(48);
            ch.read(t, ch.size() - 48);
            all = t.array();
        }
        String trailer = new String(all, java.nio.charset.StandardCharsets.ISO_8859_1);
        if (!trailer.startsWith("JFLNPAY1")) {
            throw new IOException(plugin + ": no trailer");
        }
        return "jflannel-" + trailer.substring(24, 36);
    }

    /** Makes a one-file plugin name another bundle: its trailer's id rewritten in place. */
    static void renameTrailerBundle(Path plugin, String bundle) throws IOException {
        if (!bundle.matches("jflannel-[0-9a-f]{12}")) {
            throw new IllegalArgumentException("bundle: expected jflannel-<12 hex digits>, got " + bundle);
        }
        try (var ch = java.nio.channels.FileChannel.open(plugin, java.nio.file.StandardOpenOption.WRITE)) {
            ch.write(java.nio.ByteBuffer.wrap(bundle.substring(9).getBytes(java.nio.charset.StandardCharsets.US_ASCII)),
                    ch.size() - 24);
        }
    }

    /** Every DT_NEEDED library of every ELF file under {@code dir} (objdump -p). */
    static java.util.Set<String> neededLibraries(Path dir) throws IOException, InterruptedException {
        List<String> elves = new ArrayList<>();
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) s::iterator) {
                if (Files.isRegularFile(p) && !Files.isSymbolicLink(p) && isElf(p)) {
                    elves.add(p.toString());
                }
            }
        }
        if (elves.isEmpty()) {
            throw new IOException("no ELF file under " + dir);
        }
        List<String> cmd = new ArrayList<>(List.of("objdump", "-p"));
        cmd.addAll(elves);
        String out = org.jflannel.testsupport.cluster.Cmd.run(java.time.Duration.ofMinutes(2), cmd).orThrow().stdout();
        java.util.Set<String> needed = new java.util.TreeSet<>();
        Matcher m = NEEDED.matcher(out);
        while (m.find()) {
            needed.add(m.group(1));
        }
        return needed;
    }

    private static boolean isElf(Path p) throws IOException {
        try (var in = Files.newInputStream(p)) {
            byte[] magic = in.readNBytes(4);
            return magic.length == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        ImageRootfs.delete(dir);
    }
}
