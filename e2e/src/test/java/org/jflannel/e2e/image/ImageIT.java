package org.jflannel.e2e.image;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.image.ImageRootfs;
import org.jflannel.testsupport.image.ImageRootfs.Bind;
import org.jflannel.testsupport.netns.NetnsNames;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The built image (packaging/target/jflannel-image.oci.tar), unpacked with umoci: its layout, flanneld
 * and the CNI plugin running inside it (chroot), its AppCDS archives mapping, the installed plugin
 * running on a host without Java, the plugin needing nothing of the host, and the iptables mode choice.
 */
@Tag("e2e")
class ImageIT {
    private static final Duration WITHIN = Duration.ofSeconds(120);
    private static final String VERSION_CONF = "{\"cniVersion\":\"1.0.0\",\"name\":\"cbr0\",\"type\":\"flannel\"}";
    private static UnpackedImage image;

    @TempDir
    Path host;

    @BeforeAll
    static void unpack() throws Exception {
        image = new UnpackedImage();
    }

    @AfterAll
    static void remove() throws Exception {
        if (image != null) {
            image.close();
        }
    }

    @Test
    void layoutIsTheContracts() throws Exception {
        Path r = image.rootfs;
        String bundle = image.bundle();
        assertThat(r.resolve("opt/jflannel/bin/flanneld")).isExecutable();
        assertThat(r.resolve("opt/jflannel/jre/bin/java")).isExecutable();
        assertThat(r.resolve("opt/jflannel/app/flanneld.jar")).isRegularFile();
        // no shipped daemon archives: class lists and the key naming the archives made on the node
        assertThat(r.resolve("opt/jflannel/app/cds/etcd.classlist")).isRegularFile();
        assertThat(r.resolve("opt/jflannel/app/cds/kube.classlist")).isRegularFile();
        assertThat(Files.readString(r.resolve("opt/jflannel/app/cds/KEY")).strip()).matches("[0-9a-f]{16}");
        try (var jsa = Files.find(r, 12, (p, a) -> p.toString().endsWith(".jsa") && !p.toString().contains("/cni/"))) {
            assertThat(jsa.toList()).as("daemon archives in the image").isEmpty();
        }
        assertThat(r.resolve("opt/jflannel/cni/flannel")).isExecutable();
        assertThat(UnpackedImage.trailerBundle(r.resolve("opt/jflannel/cni/flannel"))).isEqualTo(bundle);
        // upstream's paths: its kube-flannel.yml runs these
        assertThat(r.resolve("flannel")).isExecutable();
        assertThat(Files.getAttribute(r.resolve("flannel"), "unix:ino"))
                .as("/flannel is the plugin file itself").isEqualTo(Files.getAttribute(r.resolve("opt/jflannel/cni/flannel"), "unix:ino"));
        assertThat(r.resolve("opt/bin/flanneld")).isExecutable();
        assertThat(r.resolve("opt/bin/install-conf")).isExecutable();
        assertThat(r.resolve("usr/bin/cp")).isExecutable();
        try (var s = Files.list(r.resolve("opt/jflannel/cni"))) {
            assertThat(s.map(p -> p.getFileName().toString()).toList())
                    .as("the bundle is in the image once: as the plugin file's payload").containsExactly("flannel");
        }
        Path b = image.unpackedBundle();
        assertThat(b.resolve("jre/bin/java")).isExecutable();
        assertThat(b.resolve("jre/bin/ld-linux-x86-64.so.2")).isExecutable();
        assertThat(b.resolve("jre/lib/glibc/libc.so.6")).isRegularFile();
        assertThat(b.resolve("cni-flannel.jar")).isRegularFile();
        assertThat(b.resolve("lib/core.jar")).isRegularFile();
        assertThat(b.resolve("flannel.aot")).isRegularFile();
        // the runtime's files the plugin never runs are left out (delegates start by FORK, not jspawnhelper)
        assertThat(b.resolve("jre/lib/jspawnhelper")).doesNotExist();
        assertThat(b.resolve("jre/bin/keytool")).doesNotExist();
        assertThat(Files.readSymbolicLink(r.resolve("usr/sbin/iptables")).toString()).isEqualTo("iptables-wrapper");
        assertThat(Files.readSymbolicLink(r.resolve("usr/sbin/iptables-restore")).toString()).isEqualTo("iptables-wrapper");
        assertThat(r.resolve("usr/sbin/xtables-nft-multi")).isExecutable();
        assertThat(r.resolve("usr/sbin/xtables-legacy-multi")).isExecutable();
        assertThat(r.resolve("usr/sbin/nft")).isExecutable();
        assertThat(r.resolve("etc/ssl/certs/ca-certificates.crt")).isRegularFile();
        assertThat(Files.readString(r.resolve("etc/os-release"))).contains("bookworm");
    }

    @Test
    void flanneldRunsInTheImageWithTheArchiveMadeOnTheNode() throws Exception {
        Cmd.Result version = ImageRootfs.run(image.rootfs, List.of(), Map.of(), List.of("/opt/jflannel/bin/flanneld", "--version"), WITHIN, null);
        assertThat(version.exitCode()).as(version.stderr()).isZero();
        assertThat(version.stderr()).contains("0.1.0");
        String key = Files.readString(image.rootfs.resolve("opt/jflannel/app/cds/KEY")).strip();
        Path cds = Files.createDirectories(host.resolve("var/lib/jflannel/cds"));
        Files.writeString(cds.resolve("flanneld-etcd-0123456789abcdef.jsa"), "an older image's archive");
        for (String mode : List.of("false", "true")) {
            // the init container: dumps the archive of its subnet manager into the hostPath, then a no-op
            Map<String, String> env = Map.of("FLANNELD_KUBE_SUBNET_MGR", mode);
            List<Bind> binds = List.of(Bind.of(cds, "/var/lib/jflannel/cds"));
            for (String event : List.of("dumped", "present")) {
                Cmd.Result dump = ImageRootfs.run(image.rootfs, binds, env, List.of("/opt/jflannel/bin/flanneld", "cds-archive"), WITHIN, null);
                assertThat(dump.exitCode()).as(dump.stderr()).isZero();
                assertThat(dump.stderr()).contains("cds-archive: " + event + " archive=/var/lib/jflannel/cds/flanneld-"
                        + ("true".equals(mode) ? "kube" : "etcd") + "-" + key + ".jsa");
            }
            // -Xshare:on: the JVM refuses to start when the archive does not map (instead of running without)
            Cmd.Result r = ImageRootfs.run(image.rootfs, binds,
                    Map.of("FLANNELD_KUBE_SUBNET_MGR", mode, "FLANNELD_JAVA_OPTS", "-Xshare:on -Xlog:class+load=info:file=/tmp/classload.log"),
                    List.of("/opt/jflannel/bin/flanneld", "--version"), WITHIN, null);
            assertThat(r.exitCode()).as("%s: %s", mode, r.stderr()).isZero();
            // mapped whole: no "[cds]" complaint (e.g. module options differing from the dump's)
            assertThat(r.stderr()).as(mode).doesNotContain("[cds]");
            String log = Files.readString(image.rootfs.resolve("tmp/classload.log"));
            assertThat(log).as(mode).containsPattern("org\\.jflannel\\.flanneld\\.Main source: shared objects file");
        }
        try (var files = Files.list(cds)) {
            assertThat(files.map(p -> p.getFileName().toString()).sorted().toList())
                    .as("the other image's archive removed").containsExactly("flanneld-etcd-" + key + ".jsa", "flanneld-kube-" + key + ".jsa");
        }
    }

    /** The issue-19 budget (packaging/image-budget.properties): compressed archive and unpacked root filesystem. */
    @Test
    void imageStaysWithinItsSizeBudget() throws Exception {
        java.util.Properties budget = new java.util.Properties();
        try (var in = Files.newInputStream(Path.of(System.getProperty("jflannel.root", Path.of(System.getProperty("user.dir")).getParent().toString()))
                .resolve("packaging/image-budget.properties"))) {
            budget.load(in);
        }
        long mib = 1024 * 1024;
        long archive = Files.size(ImageRootfs.archive());
        long unpacked;
        try (var files = Files.walk(image.rootfs)) {
            // hard links (the two runtimes share libjvm.so) counted once, as in the layer
            unpacked = files.filter(Files::isRegularFile).map(p -> {
                try {
                    return Files.readAttributes(p, "unix:ino,size");
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }).collect(java.util.stream.Collectors.toMap(a -> a.get("ino"), a -> (Long) a.get("size"), (a, b) -> a))
                    .values().stream().mapToLong(Long::longValue).sum();
        }
        System.out.printf("image: %.1f MiB compressed, %.1f MiB unpacked%n", archive / (double) mib, unpacked / (double) mib);
        // zstd layers have their budget, a gzip build (-Dimage.compression=gzip) its own
        String key = "gzip".equals(System.getProperty("jflannel.image.compression", "zstd")) ? "compressed.gzip.mib" : "compressed.mib";
        assertThat(archive).as("compressed archive, bytes").isLessThanOrEqualTo((long) (Double.parseDouble(budget.getProperty(key)) * mib));
        assertThat(unpacked).as("unpacked root filesystem, bytes").isLessThanOrEqualTo((long) (Double.parseDouble(budget.getProperty("unpacked.mib")) * mib));
    }

    /**
     * The layers are compressed as their media type says (zstd unless built with
     * JFLANNEL_IMAGE_COMPRESSION=gzip), and a runtime's image library reads them: skopeo
     * (containers/image, CRI-O's) decompressed and verified every layer for the unpacking above.
     */
    @Test
    void layersAreCompressedAsTheirMediaTypeSays() throws Exception {
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        Path layout = image.dir.resolve("oci");
        Path blobs = layout.resolve("blobs/sha256");
        String manifest = json.readTree(layout.resolve("index.json").toFile()).path("manifests").get(0).path("digest").asText();
        var layers = json.readTree(blobs.resolve(manifest.substring(7)).toFile()).path("layers");
        assertThat(layers.size()).as("base OS, then runtimes and application").isEqualTo(2);
        String expected = System.getProperty("jflannel.image.compression", "zstd");
        for (var layer : layers) {
            String media = layer.path("mediaType").asText();
            assertThat(media).isEqualTo("application/vnd.oci.image.layer.v1.tar+" + expected);
            byte[] head = new byte[4];
            try (var in = Files.newInputStream(blobs.resolve(layer.path("digest").asText().substring(7)))) {
                assertThat(in.readNBytes(head, 0, 4)).isEqualTo(4);
            }
            // zstd frames start 28 b5 2f fd, gzip members 1f 8b
            byte[] magic = "zstd".equals(expected) ? new byte[] {0x28, (byte) 0xb5, 0x2f, (byte) 0xfd} : new byte[] {0x1f, (byte) 0x8b};
            assertThat(java.util.Arrays.copyOf(head, magic.length)).as("%s: magic", layer.path("digest").asText()).isEqualTo(magic);
        }
    }

    @Test
    void installSubcommandsWorkInTheImage() throws Exception {
        Path cniBin = Files.createDirectories(host.resolve("opt/cni/bin"));
        Path netd = Files.createDirectories(host.resolve("etc/cni/net.d"));
        Path cfg = Files.createDirectories(host.resolve("cfg"));
        Files.writeString(cfg.resolve("cni-conf.json"), "{\"name\":\"cbr0\",\"cniVersion\":\"1.0.0\",\"plugins\":[{\"type\":\"flannel\"}]}");

        Cmd.Result plugin = ImageRootfs.run(image.rootfs, List.of(Bind.of(cniBin, "/opt/cni/bin")), Map.of(),
                List.of("/opt/jflannel/bin/flanneld", "install-cni-plugin", "/opt/cni/bin"), WITHIN, null);
        assertThat(plugin.exitCode()).as(plugin.stderr()).isZero();
        Cmd.Result conf = ImageRootfs.run(image.rootfs, List.of(Bind.of(netd, "/etc/cni/net.d"), new Bind(cfg, "/etc/kube-flannel", true)),
                Map.of(), List.of("/opt/jflannel/bin/flanneld", "install-cni-conf", "/etc/kube-flannel/cni-conf.json",
                        "/etc/cni/net.d/10-flannel.conflist"), WITHIN, null);
        assertThat(conf.exitCode()).as(conf.stderr()).isZero();
        assertThat(netd.resolve("10-flannel.conflist")).hasSameTextualContentAs(cfg.resolve("cni-conf.json"));
        assertThat(cniBin.resolve("flannel")).isExecutable();
        assertThat(cniBin.resolve(image.bundle()).resolve("jre/bin/java")).isExecutable();

        // the installed plugin on the "host": no JAVA_HOME, no PATH to any JDK (nothing on PATH at all)
        Cmd.Result v = Cmd.run(WITHIN, List.of("env", "-i", "PATH=/nonexistent", "CNI_COMMAND=VERSION",
                cniBin.resolve("flannel").toString()), Map.of(), VERSION_CONF);
        assertThat(v.exitCode()).as(v.stderr()).isZero();
        assertThat(v.stdout()).contains("\"supportedVersions\"").contains("1.0.0");

        // at /opt/cni/bin (where the init container mounts the host's directory) the plugin's AOT cache maps:
        // -XX:AOTMode=on would fail otherwise (a GC or heap option differing from the build's dump, say)
        Cmd.Result mapped = ImageRootfs.run(image.rootfs, List.of(Bind.of(cniBin, "/opt/cni/bin")),
                Map.of("CNI_COMMAND", "VERSION", "JFLANNEL_JAVA_OPTS", "-XX:AOTMode=on"), List.of("/opt/cni/bin/flannel"), WITHIN, VERSION_CONF);
        assertThat(mapped.exitCode()).as(mapped.stderr()).isZero();
        assertThat(mapped.stdout()).contains("\"supportedVersions\"");
        assertThat(mapped.stderr()).isEmpty();

        // and so does the image's own copy, at a path the cache was not dumped for (JDK 25 accepts the runtime and
        // the jar moved together), silently
        Cmd.Result inImage = ImageRootfs.run(image.rootfs, List.of(), Map.of("CNI_COMMAND", "VERSION", "JFLANNEL_JAVA_OPTS", "-XX:AOTMode=on"),
                List.of("/opt/jflannel/cni/flannel"), WITHIN, VERSION_CONF);
        assertThat(inImage.exitCode()).as(inImage.stderr()).isZero();
        assertThat(inImage.stdout()).contains("\"supportedVersions\"");
        assertThat(inImage.stderr()).isEmpty();
    }

    @Test
    void oneFilePluginUnpacksItsBundleOnceWhenFirstRunsRace() throws Exception {
        Path bin = Files.createDirectories(host.resolve("opt/cni/bin"));
        Files.copy(image.rootfs.resolve("flannel"), bin.resolve("flannel"), java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(4);
        try {
            List<java.util.concurrent.Future<Cmd.Result>> runs = new java.util.ArrayList<>();
            for (int i = 0; i < 4; i++) {
                runs.add(pool.submit(() -> Cmd.run(WITHIN, List.of("env", "-i", "CNI_COMMAND=VERSION", bin.resolve("flannel").toString()),
                        Map.of(), VERSION_CONF)));
            }
            for (var f : runs) {
                Cmd.Result r = f.get(3, java.util.concurrent.TimeUnit.MINUTES);
                assertThat(r.exitCode()).as(r.stderr()).isZero();
                assertThat(r.stdout()).contains("\"supportedVersions\"");
            }
        } finally {
            pool.shutdownNow();
        }
        try (var s = Files.list(bin)) {
            assertThat(s.map(p -> p.getFileName().toString()).sorted().toList()).as("one bundle, no leftovers")
                    .containsExactly(".jflannel-install.lock", "flannel", image.bundle());
        }
        // a damaged file: a CNI error on stdout, not a crash
        Path cut = host.resolve("cut/flannel");
        Files.createDirectories(cut.getParent());
        try (var in = Files.newInputStream(bin.resolve("flannel"))) {
            Files.write(cut, in.readNBytes(200_000));
        }
        cut.toFile().setExecutable(true);
        Cmd.Result broken = Cmd.run(WITHIN, List.of("env", "-i", "CNI_COMMAND=VERSION", cut.toString()), Map.of(), VERSION_CONF);
        assertThat(broken.exitCode()).isEqualTo(1);
        assertThat(broken.stdout()).contains("\"code\":999").contains("carries no bundle");
    }

    @Test
    void pluginNeedsNothingFromTheHost() throws Exception {
        Path launcher = image.rootfs.resolve("opt/jflannel/cni/flannel");
        String file = Cmd.run(WITHIN, List.of("file", "-b", launcher.toString())).orThrow().stdout();
        assertThat(file).as("the launcher").contains("statically linked");
        // every library any ELF file of the bundle links is in the bundle: glibc's from jre/lib/glibc, its
        // loader (which libc names) in jre/bin, where the launcher runs it from
        Path bundle = image.unpackedBundle();
        java.util.Set<String> needed = UnpackedImage.neededLibraries(bundle);
        java.util.Set<String> present = new java.util.TreeSet<>();
        try (var s = Files.walk(bundle.resolve("jre"))) {
            s.filter(Files::isRegularFile).forEach(p -> present.add(p.getFileName().toString()));
        }
        System.out.println("CNI bundle " + bundle.getFileName() + ": needs " + needed);
        assertThat(needed).contains("libc.so.6", "libjvm.so", "ld-linux-x86-64.so.2");
        assertThat(present).as("libraries in the bundle").containsAll(needed);
    }

    /**
     * The ipsec backend's strongSwan (issue 39): charon, its two libraries and exactly the plugins flanneld's
     * strongswan.conf loads (DaemonSetOnFakeHostsIT.ipsecFromTheImage checks that list against the conf the
     * daemon writes), and every library they link, transitively (DT_NEEDED, found through charon's RUNPATH
     * /usr/lib/ipsec or the system's library directory), is in the image; none of strongswan-starter,
     * swanctl, adduser or perl is. charon starts in the image and says its version.
     */
    @Test
    void strongswanCarriesWhatCharonLinksAndNoMore() throws Exception {
        Path r = image.rootfs;
        Path ipsec = r.resolve("usr/lib/ipsec");
        assertThat(ipsec.resolve("charon")).isExecutable();
        java.util.Set<String> plugins = new java.util.TreeSet<>();
        try (var s = Files.list(ipsec.resolve("plugins"))) {
            s.forEach(p -> plugins.add(p.getFileName().toString().replaceFirst("^libstrongswan-", "").replaceFirst("\\.so$", "")));
        }
        assertThat(plugins).containsExactlyInAnyOrder("random", "nonce", "aes", "sha1", "sha2", "hmac", "kdf", "gmp", "openssl", "pem",
                "pkcs1", "x509", "kernel-netlink", "socket-default", "vici");
        List<Path> dirs = List.of(ipsec, r.resolve("usr/lib/x86_64-linux-gnu"));
        java.util.Set<String> missing = new java.util.TreeSet<>();
        java.util.Set<String> seen = new java.util.TreeSet<>();
        java.util.Deque<Path> todo = new java.util.ArrayDeque<>();
        try (var s = Files.walk(ipsec)) {
            s.filter(p -> Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)).forEach(todo::add);
        }
        int bound = 200; // a closure over a few dozen libraries
        while (!todo.isEmpty() && bound-- > 0) {
            Path elf = todo.poll();
            for (String lib : UnpackedImage.neededLibraries(elf)) {
                if (!seen.add(lib)) {
                    continue;
                }
                java.util.Optional<Path> found = dirs.stream().map(d -> d.resolve(lib)).filter(Files::exists).findFirst();
                if (found.isPresent()) {
                    todo.add(found.get().toRealPath()); // Debian's library links are relative: they stay in the image
                } else {
                    missing.add(elf.getFileName() + " needs " + lib);
                }
            }
        }
        assertThat(todo).as("closure bound").isEmpty();
        System.out.println("strongSwan in the image: plugins " + plugins + ", libraries linked " + seen);
        assertThat(seen).contains("libstrongswan.so.0", "libcharon.so.0", "libcrypto.so.3", "libgmp.so.10", "libsystemd.so.0");
        assertThat(missing).as("libraries strongSwan links that the image lacks").isEmpty();
        // (debconf's scripts were in the base before strongSwan, from ca-certificates; perl is not)
        for (String absent : List.of("usr/sbin/swanctl", "usr/lib/ipsec/starter", "usr/sbin/ipsec", "etc/ipsec.conf", "usr/sbin/adduser",
                "usr/bin/perl", "usr/lib/ipsec/libvici.so.0", "etc/strongswan.d", "usr/lib/x86_64-linux-gnu/libssl.so.3")) {
            assertThat(r.resolve(absent)).as("not in the image: /%s", absent).doesNotExist();
        }
        // as flanneld runs it: STRONGSWAN_CONF names a conf of ours (the image has no /etc/strongswan.conf)
        Path conf = Files.createDirectories(host.resolve("ipsec"));
        Files.writeString(conf.resolve("strongswan.conf"), "charon {\n}\n");
        Cmd.Result version = ImageRootfs.run(r, List.of(Bind.of(conf, "/run/flannel/ipsec")),
                Map.of("STRONGSWAN_CONF", "/run/flannel/ipsec/strongswan.conf"), List.of("/usr/lib/ipsec/charon", "--version"), WITHIN, null);
        assertThat(version.exitCode()).as(version.stderr()).isZero();
        assertThat(version.stdout() + version.stderr()).contains("strongSwan 5.9.8");
    }

    @Test
    void iptablesFollowsTheModeTheHostUses() throws Exception {
        String empty = NetnsNames.unique("iptn");
        String legacy = NetnsNames.unique("iptl");
        Cmd.run(WITHIN, List.of("ip", "netns", "add", empty)).orThrow();
        try {
            Cmd.run(WITHIN, List.of("ip", "netns", "add", legacy)).orThrow();
            // no rules at all: nft (upstream's default)
            resetWrapper();
            Cmd.Result nft = inImage(empty, List.of("iptables", "-t", "filter", "-S"));
            assertThat(nft.exitCode()).as(nft.stderr()).isZero();
            assertThat(nft.stderr()).contains("iptables-nft");
            assertThat(Files.readSymbolicLink(image.rootfs.resolve("usr/sbin/iptables")).toString()).isEqualTo("xtables-nft-multi");
            assertThat(Files.readSymbolicLink(image.rootfs.resolve("usr/sbin/iptables-restore")).toString()).isEqualTo("xtables-nft-multi");

            // kubelet's hint chain made by legacy iptables: legacy, and the command sees the host's chain
            Cmd.run(WITHIN, List.of("ip", "netns", "exec", legacy, "iptables-legacy", "-t", "mangle", "-N", "KUBE-IPTABLES-HINT")).orThrow();
            resetWrapper();
            Cmd.Result l = inImage(legacy, List.of("iptables", "-t", "mangle", "-S"));
            assertThat(l.exitCode()).as(l.stderr()).isZero();
            assertThat(l.stdout()).contains("-N KUBE-IPTABLES-HINT");
            assertThat(Files.readSymbolicLink(image.rootfs.resolve("usr/sbin/iptables-save")).toString()).isEqualTo("xtables-legacy-multi");
            assertThat(Files.readSymbolicLink(image.rootfs.resolve("usr/sbin/ip6tables")).toString()).isEqualTo("xtables-legacy-multi");
        } finally {
            resetWrapper();
            Cmd.run(WITHIN, List.of("ip", "netns", "del", empty));
            Cmd.run(WITHIN, List.of("ip", "netns", "del", legacy));
        }
    }

    /** Runs argv inside the image, in network namespace {@code ns} (a hostNetwork pod on that "node"). */
    private static Cmd.Result inImage(String ns, List<String> argv) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("ip", "netns", "exec", ns));
        cmd.addAll(ImageRootfs.command(image.rootfs, List.of(), Map.of(), argv));
        return Cmd.run(WITHIN, cmd);
    }

    private static void resetWrapper() throws Exception {
        for (String cmd : List.of("iptables", "iptables-save", "iptables-restore", "ip6tables", "ip6tables-save", "ip6tables-restore")) {
            Path link = image.rootfs.resolve("usr/sbin").resolve(cmd);
            Files.deleteIfExists(link);
            Files.createSymbolicLink(link, Path.of("iptables-wrapper"));
        }
    }
}
