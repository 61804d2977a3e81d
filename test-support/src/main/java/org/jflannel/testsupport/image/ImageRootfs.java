package org.jflannel.testsupport.image;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jflannel.testsupport.cluster.Cmd;

/**
 * The jflannel image as a root filesystem, the way a container runtime would see it: the OCI archive
 * that {@code bin/image} (or the {@code packaging} module under {@code -Pintegration}) builds is
 * read by skopeo (containers/image, CRI-O's image library: it reads the zstd layers and checks every
 * digest), which writes it as a gzip layout for umoci (0.4 reads gzip only) to unpack, and commands run
 * inside it with chroot in a private mount namespace (no container runtime works on the build machine).
 * Needs root and the {@code skopeo} and {@code umoci} packages.
 */
public final class ImageRootfs {
    /** Where the build writes the image, relative to the repository root. */
    public static final String ARCHIVE = "packaging/target/jflannel-image.oci.tar";
    /** PATH inside the image (the image config's). */
    public static final String PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

    private static final ObjectMapper JSON = new ObjectMapper();

    /** A host directory mounted at {@code containerPath} (a hostPath volume). */
    public record Bind(Path hostPath, String containerPath, boolean readOnly) {
        public static Bind of(Path hostPath, String containerPath) {
            return new Bind(hostPath, containerPath, false);
        }
    }

    private ImageRootfs() {
    }

    /**
     * The built archive: {@code -Djflannel.image=PATH} if set, else {@link #ARCHIVE} under
     * {@code -Djflannel.root} (the e2e module sets it), else under the first parent of the working
     * directory that has a {@code packaging/} folder.
     */
    public static Path archive() throws IOException {
        String explicit = System.getProperty("jflannel.image");
        if (explicit != null && !explicit.isBlank()) {
            return existing(Path.of(explicit));
        }
        String root = System.getProperty("jflannel.root");
        if (root != null && !root.isBlank()) {
            return existing(Path.of(root).resolve(ARCHIVE));
        }
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isDirectory(p.resolve("packaging"))) {
                return existing(p.resolve(ARCHIVE));
            }
        }
        throw new IOException("image archive: no packaging/ folder above " + Path.of("").toAbsolutePath()
                + "; set -Djflannel.image");
    }

    private static Path existing(Path archive) throws IOException {
        if (!Files.isRegularFile(archive)) {
            throw new IOException("image archive " + archive + " missing: run bin/image (or mvn -Pintegration package -pl packaging -am)");
        }
        return archive.toAbsolutePath().normalize();
    }

    /**
     * Unpacks {@code ociArchive} under {@code dest} (created; {@code dest/oci} the archive's layout,
     * {@code dest/oci-gzip} skopeo's gzip copy, {@code dest/bundle} umoci's bundle) and returns the root
     * filesystem, {@code dest/bundle/rootfs}.
     */
    public static Path unpack(Path ociArchive, Path dest) throws IOException, InterruptedException {
        Path layout = dest.resolve("oci");
        Path gzip = dest.resolve("oci-gzip");
        Path bundle = dest.resolve("bundle");
        Files.createDirectories(layout);
        Cmd.run(Duration.ofMinutes(2), List.of("tar", "-xf", ociArchive.toString(), "-C", layout.toString())).orThrow();
        String tag = tag(layout.resolve("index.json"));
        // zstd or gzip layers in, gzip out: skopeo decompresses (and verifies) what the runtimes would
        Cmd.run(Duration.ofMinutes(5), List.of("skopeo", "--insecure-policy", "copy", "--quiet", "--dest-compress-format=gzip",
                "oci:" + layout + ":" + tag, "oci:" + gzip + ":" + tag)).orThrow();
        Cmd.run(Duration.ofMinutes(5), List.of("umoci", "unpack", "--image", gzip + ":" + tag, bundle.toString())).orThrow();
        Path rootfs = bundle.resolve("rootfs");
        if (!Files.isRegularFile(rootfs.resolve("opt/jflannel/bin/flanneld"))) {
            throw new IOException("image " + ociArchive + ": unpacked root filesystem " + rootfs + " has no /opt/jflannel/bin/flanneld");
        }
        return rootfs;
    }

    /** The tag of the archive's single manifest (org.opencontainers.image.ref.name). */
    static String tag(Path indexJson) throws IOException {
        JsonNode manifests = JSON.readTree(indexJson.toFile()).path("manifests");
        if (manifests.size() != 1) {
            throw new IOException("image index " + indexJson + ": expected one manifest, found " + manifests.size());
        }
        String tag = manifests.get(0).path("annotations").path("org.opencontainers.image.ref.name").asText("");
        if (tag.isEmpty()) {
            throw new IOException("image index " + indexJson + ": manifest has no org.opencontainers.image.ref.name");
        }
        return tag;
    }

    /** Removes an unpacked image (root-owned files, device-free), staying on its file system. */
    public static void delete(Path dest) throws IOException, InterruptedException {
        if (Files.exists(dest)) {
            Cmd.run(Duration.ofMinutes(1), List.of("rm", "-rf", "--one-file-system", dest.toString())).orThrow();
        }
    }

    /**
     * The command line that runs {@code argv} inside {@code rootfs}: a private mount namespace with
     * /proc, /dev (the host's, bound), /sys, the {@code binds}, then chroot, with exactly {@code env}
     * plus the image's PATH (no variable of ours leaks in). Prefix it with {@code ip netns exec NS} to run
     * in a node's network namespace (the pod's hostNetwork). The mounts vanish with the process.
     */
    public static List<String> command(Path rootfs, List<Bind> binds, Map<String, String> env, List<String> argv) {
        StringBuilder script = new StringBuilder("set -e; r=$1; ")
                .append("mount -t proc proc \"$r/proc\"; mount --rbind /dev \"$r/dev\"; mount --rbind /sys \"$r/sys\"; ");
        List<String> args = new ArrayList<>();
        int i = 0;
        for (Bind b : binds) {
            // $2.. carry the paths: no quoting of paths inside the script
            String host = "\"$" + (2 + 2 * i) + "\"";
            String target = "\"$r$" + (3 + 2 * i) + "\"";
            script.append("mkdir -p ").append(target).append("; mount --bind ").append(host).append(' ').append(target).append("; ");
            if (b.readOnly()) {
                script.append("mount -o remount,bind,ro ").append(target).append("; ");
            }
            args.add(b.hostPath().toAbsolutePath().toString());
            args.add(b.containerPath());
            i++;
        }
        script.append("shift ").append(1 + 2 * binds.size()).append("; exec chroot \"$r\" \"$@\"");
        List<String> cmd = new ArrayList<>(List.of("unshare", "--mount", "--propagation", "private", "--",
                "sh", "-c", script.toString(), "sh", rootfs.toAbsolutePath().toString()));
        cmd.addAll(args);
        cmd.add("/usr/bin/env");
        cmd.add("-i");
        Map<String, String> all = new TreeMap<>(env);
        all.putIfAbsent("PATH", PATH);
        all.forEach((k, v) -> cmd.add(k + "=" + v));
        cmd.addAll(argv);
        return cmd;
    }

    /** Runs {@link #command} to completion within {@code within}. */
    public static Cmd.Result run(Path rootfs, List<Bind> binds, Map<String, String> env, List<String> argv, Duration within, String stdin)
            throws IOException, InterruptedException {
        return Cmd.run(within, command(rootfs, binds, env, argv), Map.of(), stdin);
    }
}
