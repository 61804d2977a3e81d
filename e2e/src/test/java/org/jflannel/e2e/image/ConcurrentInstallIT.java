package org.jflannel.e2e.image;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.image.ImageRootfs;
import org.jflannel.testsupport.image.ImageRootfs.Bind;
import org.jflannel.testsupport.netns.NetnsNames;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The installed plugin while the init container runs again: 20 ADDs (the installed
 * {@code /opt/cni/bin/flannel} of a fake host, delegating to Debian's bridge and host-local, in throwaway
 * namespaces) run while {@code flanneld install-cni-plugin} from the image replaces the bundle, back and
 * forth between two versions. Every ADD either succeeds or fails cleanly (CNI error JSON on stdout);
 * none runs a half-copied launcher or runtime.
 */
@Tag("netns")
class ConcurrentInstallIT {
    private static final int PODS = 20;
    private static final int PARALLEL = 4;
    private static final int MAX_INSTALLS = 10;
    private static final Duration WITHIN = Duration.ofSeconds(180);
    private static final ObjectMapper JSON = new ObjectMapper();

    @TempDir
    Path dir;

    @Test
    void addsDuringReinstallSucceedOrFailCleanly() throws Exception {
        List<String> namespaces = new ArrayList<>();
        ExecutorService pool = Executors.newFixedThreadPool(PARALLEL);
        try (UnpackedImage image = new UnpackedImage()) {
            Path cniBin = Files.createDirectories(dir.resolve("host/opt/cni/bin"));
            String v1 = image.bundle();
            // a second version: the same plugin file, its trailer naming another bundle
            Path v2src = dir.resolve("v2");
            Cmd.run(WITHIN, List.of("cp", "-a", image.rootfs.resolve("opt/jflannel/cni").toString(), v2src.toString())).orThrow();
            String v2 = "jflannel-" + (v1.endsWith("0") ? "111111111111" : "000000000000");
            UnpackedImage.renameTrailerBundle(v2src.resolve("flannel"), v2);

            assertThat(install(image, cniBin, null).exitCode()).isZero();
            assertThat(UnpackedImage.trailerBundle(cniBin.resolve("flannel"))).isEqualTo(v1);

            String node = NetnsNames.unique("cinode");
            Cmd.run(WITHIN, List.of("ip", "netns", "add", node)).orThrow();
            namespaces.add(node);
            Path subnetEnv = Files.writeString(dir.resolve("subnet.env"),
                    "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.9.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n");
            String conf = "{\"cniVersion\":\"1.0.0\",\"name\":\"cbr0\",\"type\":\"flannel\",\"delegate\":{\"bridge\":\""
                    + NetnsNames.unique("cb") + "\",\"isDefaultGateway\":true},\"ipam\":{\"dataDir\":\"" + dir.resolve("ipam")
                    + "\"},\"subnetFile\":\"" + subnetEnv + "\",\"dataDir\":\"" + dir.resolve("flannel") + "\"}";
            List<Future<Cmd.Result>> adds = new ArrayList<>();
            for (int i = 0; i < PODS; i++) {
                String pod = NetnsNames.unique("cipod");
                Cmd.run(WITHIN, List.of("ip", "netns", "add", pod)).orThrow();
                namespaces.add(pod);
                adds.add(pool.submit(() -> Cmd.run(WITHIN, List.of("ip", "netns", "exec", node, "env", "-i",
                        "PATH=/usr/sbin:/sbin", "CNI_COMMAND=ADD", "CNI_CONTAINERID=" + pod, "CNI_NETNS=/run/netns/" + pod,
                        "CNI_IFNAME=eth0", "CNI_PATH=/usr/lib/cni", cniBin.resolve("flannel").toString()), Map.of(), conf)));
            }
            // reinstall, alternating versions, until the ADDs are done (bounded)
            int installs = 0;
            while (installs < MAX_INSTALLS && adds.stream().anyMatch(f -> !f.isDone())) {
                Cmd.Result r = install(image, cniBin, installs % 2 == 0 ? v2src : null);
                assertThat(r.exitCode()).as(r.stderr()).isZero();
                installs++;
            }
            int ok = 0;
            int failedCleanly = 0;
            for (Future<Cmd.Result> f : adds) {
                Cmd.Result r = f.get(5, TimeUnit.MINUTES);
                JsonNode out = JSON.readTree(r.stdout());
                if (r.exitCode() == 0) {
                    assertThat(out.path("ips").isArray()).as("ADD result: %s", r.stdout()).isTrue();
                    ok++;
                } else {
                    assertThat(out.path("code").isInt()).as("ADD error: stdout %s stderr %s", r.stdout(), r.stderr()).isTrue();
                    assertThat(out.path("msg").asText()).isNotEmpty();
                    failedCleanly++;
                }
            }
            System.out.printf("concurrent install: %d installs during %d ADDs: %d ok, %d failed cleanly%n", installs, PODS, ok, failedCleanly);
            assertThat(installs).isPositive();
            assertThat(ok + failedCleanly).isEqualTo(PODS);
            // the launcher names a whole bundle, and the one before it is still there
            String named = UnpackedImage.trailerBundle(cniBin.resolve("flannel"));
            assertThat(named).isIn(v1, v2);
            assertThat(cniBin.resolve(named).resolve("jre/bin/java")).isExecutable();
            try (var s = Files.list(cniBin)) {
                assertThat(s.map(p -> p.getFileName().toString())).noneMatch(n -> n.startsWith(".jflannel-tmp-"));
            }
        } finally {
            pool.shutdownNow();
            pool.awaitTermination(60, TimeUnit.SECONDS);
            for (String ns : namespaces) {
                Cmd.run(WITHIN, List.of("ip", "netns", "del", ns));
            }
        }
    }

    /** The init container: the image's flanneld install-cni-plugin, the host's /opt/cni/bin mounted (and a v2 bundle over the image's). */
    private static Cmd.Result install(UnpackedImage image, Path cniBin, Path bundleSource) throws Exception {
        List<Bind> binds = new ArrayList<>(List.of(Bind.of(cniBin, "/opt/cni/bin")));
        if (bundleSource != null) {
            binds.add(new Bind(bundleSource, "/opt/jflannel/cni", true));
        }
        return ImageRootfs.run(image.rootfs, binds, Map.of(), List.of("/opt/jflannel/bin/flanneld", "install-cni-plugin", "/opt/cni/bin"),
                WITHIN, null);
    }
}
