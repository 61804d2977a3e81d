package org.jflannel.testsupport.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.testsupport.image.ImageRootfs;

/**
 * The jflannel OCI image unpacked once into a root file system (by the image module's
 * {@code ImageRootfs}, umoci underneath), plus the environment its config gives every process
 * ({@code PATH}, ...). Containers run on copy-on-write overlays of it ({@link PodRunner}), never on
 * the root file system itself.
 */
public record UnpackedImage(Path rootfs, List<String> env, List<Path> layersAbove) {
    public static final String DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    /** {@code layersAbove}: directories laid over the root filesystem, topmost first (overlayfs lower layers). */
    public UnpackedImage {
        env = List.copyOf(env);
        layersAbove = List.copyOf(layersAbove);
    }

    public UnpackedImage(Path rootfs, List<String> env) {
        this(rootfs, env, List.of());
    }

    /**
     * This image with {@code layer} on top, as an image built {@code FROM} it would be (e.g. upstream's Go
     * plugin at {@code /flannel}); the same root filesystem underneath, nothing copied.
     */
    public UnpackedImage withLayer(Path layer) {
        List<Path> layers = new ArrayList<>();
        layers.add(layer);
        layers.addAll(layersAbove);
        return new UnpackedImage(rootfs, env, layers);
    }

    /** overlayfs's {@code lowerdir=} value: the layers above, then the root filesystem. */
    public String lowerDirs() {
        StringBuilder b = new StringBuilder();
        layersAbove.forEach(l -> b.append(l).append(':'));
        return b.append(rootfs).toString();
    }

    /** The archive {@code bin/image} and the packaging module build ({@code -Djflannel.image} overrides). */
    public static Path archive() throws IOException {
        return ImageRootfs.archive();
    }

    /** Unpacks {@code archive} under {@code dest} with {@link ImageRootfs} (umoci). */
    public static UnpackedImage unpack(Path archive, Path dest) throws IOException, InterruptedException {
        Path rootfs = ImageRootfs.unpack(archive, dest);
        return new UnpackedImage(rootfs, imageEnv(dest, rootfs));
    }

    /** The image config's {@code Env}, from the runtime bundle umoci writes beside the rootfs ({@code config.json}). */
    private static List<String> imageEnv(Path dest, Path rootfs) throws IOException {
        for (Path config : List.of(rootfs.resolveSibling("config.json"), dest.resolve("config.json"))) {
            if (Files.isRegularFile(config)) {
                List<String> out = new ArrayList<>();
                JsonNode env = new ObjectMapper().readTree(config.toFile()).path("process").path("env");
                env.forEach(e -> out.add(e.asText()));
                if (out.stream().noneMatch(e -> e.startsWith("PATH="))) {
                    out.add(0, DEFAULT_PATH);
                }
                return out;
            }
        }
        return List.of(DEFAULT_PATH);
    }
}
