package org.jflannel.testsupport.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The jflannel OCI image unpacked once into a root file system (by the image module's
 * {@code ImageRootfs}, umoci underneath), plus the environment its config gives every process
 * ({@code PATH}, ...). Containers run on copy-on-write overlays of it ({@link PodRunner}), never on
 * the root file system itself.
 */
public record UnpackedImage(Path rootfs, List<String> env) {
    public static final String DEFAULT_PATH = "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    private static final String IMAGE_ROOTFS = "org.jflannel.testsupport.image.ImageRootfs";

    public UnpackedImage {
        env = List.copyOf(env);
    }

    /** The archive {@code bin/image} and the packaging module build. */
    public static Path archive(Path projectRoot) {
        return projectRoot.resolve("packaging/target/jflannel-image.oci.tar");
    }

    /** Unpacks {@code archive} under {@code dest}; fails naming what is missing (the archive, or ImageRootfs). */
    public static UnpackedImage unpack(Path archive, Path dest) throws Exception {
        if (!Files.isRegularFile(archive)) {
            throw new IllegalStateException("no image archive at " + archive + ": build it first (bin/image, or "
                    + "mvn -Pintegration package -pl packaging -am)");
        }
        Path rootfs;
        try {
            rootfs = (Path) Class.forName(IMAGE_ROOTFS).getMethod("unpack", Path.class, Path.class).invoke(null, archive, dest);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException(IMAGE_ROOTFS + " is not on the class path (the image module's test "
                    + "support, CONTRACT-image): cannot unpack " + archive, e);
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof Exception ex ? ex : e;
        }
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
