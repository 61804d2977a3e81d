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
    private static final Pattern GLIBC = Pattern.compile("GLIBC_([0-9]+)\\.([0-9]+)");

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

    /** The image's CNI bundle directory name (jflannel-HASH). */
    String bundle() throws IOException {
        try (Stream<Path> s = Files.list(rootfs.resolve("opt/jflannel/cni"))) {
            List<String> names = s.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("jflannel-")).toList();
            if (names.size() != 1) {
                throw new IOException("image CNI bundles: " + names);
            }
            return names.get(0);
        }
    }

    /**
     * The highest GLIBC_x.y symbol version any ELF file under {@code dir} needs (objdump -T), as
     * {@code {major, minor}}; the minimum glibc a host must have to run it.
     */
    static int[] minimumGlibc(Path dir) throws IOException, InterruptedException {
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
        List<String> cmd = new ArrayList<>(List.of("objdump", "-T"));
        cmd.addAll(elves);
        String out = org.jflannel.testsupport.cluster.Cmd.run(java.time.Duration.ofMinutes(2), cmd).orThrow().stdout();
        int[] max = {0, 0};
        Matcher m = GLIBC.matcher(out);
        while (m.find()) {
            int major = Integer.parseInt(m.group(1));
            int minor = Integer.parseInt(m.group(2));
            if (major > max[0] || (major == max[0] && minor > max[1])) {
                max[0] = major;
                max[1] = minor;
            }
        }
        return max;
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
