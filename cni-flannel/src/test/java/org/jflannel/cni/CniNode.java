package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * A "node" for the integration tests: a network namespace where the plugin runs (through the
 * real launcher, bin/flannel, under ip netns exec) so cni0 and the veths land there and not on
 * the host; a temp dir with subnet.env, the scratch dir and host-local's dir; a unique bridge.
 */
final class CniNode implements AutoCloseable {

    static final Path LAUNCHER = Path.of("..", "bin", "flannel").toAbsolutePath().normalize();

    final Netns ns;
    final Path dir;
    final Path subnetFile;
    final Path dataDir;
    final Path ipamDir;
    final String bridge;

    CniNode(Path dir, String subnetEnv) throws IOException {
        Netns.requireEnvironment();
        assertThat(LAUNCHER).isExecutable();
        this.dir = dir;
        this.subnetFile = dir.resolve("subnet.env");
        this.dataDir = dir.resolve("flannel");
        this.ipamDir = dir.resolve("ipam");
        this.bridge = Netns.uniqueName("fb");
        Files.writeString(subnetFile, subnetEnv);
        this.ns = Netns.create("fn");
    }

    /** The flannel config: {@code delegate} members besides our unique bridge, the given version. */
    String config(String name, String cniVersion, String delegateExtra) {
        return "{\"cniVersion\":\"" + cniVersion + "\",\"name\":\"" + name + "\",\"type\":\"flannel\","
            + "\"delegate\":{\"bridge\":\"" + bridge + "\"" + (delegateExtra.isEmpty() ? "" : "," + delegateExtra) + "},"
            + "\"ipam\":{\"dataDir\":\"" + ipamDir + "\"},"
            + "\"subnetFile\":\"" + subnetFile + "\",\"dataDir\":\"" + dataDir + "\"}";
    }

    Map<String, String> env(String command, String containerId, Netns pod) {
        Map<String, String> env = new HashMap<>();
        env.put("PATH", System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin"));
        env.put("CNI_COMMAND", command);
        env.put("CNI_CONTAINERID", containerId);
        env.put("CNI_NETNS", pod == null ? "" : pod.path().toString());
        env.put("CNI_IFNAME", "eth0");
        env.put("CNI_PATH", Netns.CNI_BIN.toString());
        if (System.getenv("JAVA_HOME") != null) {
            env.put("JAVA_HOME", System.getenv("JAVA_HOME"));
        }
        return env;
    }

    /** Runs our plugin in the node namespace: bin/flannel, or with -Djflannel.cni.mode=fast the launcher and the fast path. */
    Netns.Result flannel(String command, String containerId, Netns pod, String stdin) {
        if (FastPathFixture.FAST) {
            Map<String, String> env = FastPathFixture.withSocket(env(command, containerId, pod));
            env.put("JFLANNEL_CNI_DATA_DIR", dataDir.toString());
            return ns.execWith(env, stdin, TestLauncher.shared().file.toString());
        }
        return ns.execWith(env(command, containerId, pod), stdin, LAUNCHER.toString());
    }

    /** Runs one of Debian's plugins in the node namespace (portmap in the chain tests). */
    Netns.Result plugin(String type, String command, String containerId, Netns pod, String stdin) {
        return ns.execWith(env(command, containerId, pod), stdin, Netns.CNI_BIN.resolve(type).toString());
    }

    @Override
    public void close() {
        if (FastPathFixture.FAST) { // the proof that this mode was the one used: no call ran the plugin's own JVM
            assertThat(TestLauncher.shared().fallbacks()).as("plugin calls that fell back to their own JVM").isZero();
            assertThat(FastPathFixture.server().served()).isPositive();
        }
        ns.close(); // takes the bridge, the veths' node ends and the node's iptables with it
    }
}
