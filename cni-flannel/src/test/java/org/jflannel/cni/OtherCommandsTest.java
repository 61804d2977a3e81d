package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** CHECK, GC and STATUS, our meaningful versions (REFERENCE §11.6 Ours). */
class OtherCommandsTest {

    @TempDir
    Path dir;
    PluginHarness h;

    @BeforeEach
    void setUp() throws Exception {
        h = new PluginHarness(dir).subnetEnv(PluginHarness.V4_ENV).reply("ADD", "{\"cniVersion\":\"1.0.0\"}");
    }

    @Test
    void checkRunsTheDelegateWithStoredConfigAndPrevResult() throws Exception {
        assertThat(h.run("ADD", h.config("\"cniVersion\":\"1.0.0\"")).exit()).isZero();
        String stored = Files.readString(h.scratch());
        PluginHarness.Outcome o = h.run("CHECK", h.config("\"cniVersion\":\"1.0.0\",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"ips\":[]}"));
        assertThat(o.exit()).as(o.stdout()).isZero();
        assertThat(o.stdout()).isEmpty();
        PluginHarness.Call check = h.calls().get(1);
        assertThat(check.command()).isEqualTo("CHECK");
        assertThat(check.stdin()).isEqualTo(stored.replace(",\"type\":\"bridge\"}",
            ",\"prevResult\":{\"cniVersion\":\"1.0.0\",\"ips\":[]},\"type\":\"bridge\"}"));
    }

    @Test
    void checkReturnsTheDelegatesError() throws Exception {
        h.run("ADD", h.config("\"cniVersion\":\"0.4.0\""));
        h.fail("CHECK", 1, "{\"code\":7,\"msg\":\"bridge mismatch\"}", null);
        assertThat(h.run("CHECK", h.config("\"cniVersion\":\"0.4.0\"")).stdout())
            .isEqualTo(PluginHarness.error("0.4.0", 7, "bridge mismatch", ""));
    }

    @Test
    void checkWithoutSavedConfigIsUnknownContainer() {
        assertThat(h.run("CHECK", h.config("\"cniVersion\":\"1.0.0\"")).stdout()).isEqualTo(
            PluginHarness.error("1.0.0", 3, "no saved configuration for container " + PluginHarness.CONTAINER, ""));
    }

    @Test
    void gcRemovesScratchFilesOfInvalidAttachmentsAndForwardsToTheDelegate() throws Exception {
        Files.createDirectories(h.dataDir);
        for (String id : new String[] {"keep1", "stale1", "stale2"}) {
            Files.writeString(h.dataDir.resolve(id), "{}");
        }
        Files.writeString(h.dataDir.resolve(".keep1.abc.tmp"), "in flight");
        h.env.remove("CNI_CONTAINERID");
        String valid = "\"cni.dev/valid-attachments\":[{\"containerID\":\"keep1\",\"ifname\":\"eth0\"}]";
        PluginHarness.Outcome o = h.run("GC", h.config("\"cniVersion\":\"1.1.0\"," + valid));
        assertThat(o.exit()).as(o.stdout()).isZero();
        try (var files = Files.list(h.dataDir)) {
            assertThat(files.map(p -> p.getFileName().toString())).containsExactlyInAnyOrder("keep1", ".keep1.abc.tmp");
        }
        assertThat(h.calls()).singleElement().satisfies(c -> {
            assertThat(c.command()).isEqualTo("GC");
            assertThat(c.stdin()).isEqualTo("{" + valid + ",\"cniVersion\":\"1.1.0\",\"ipMasq\":false,\"ipam\":{\"ranges\":[[{\"subnet\":"
                + "\"10.1.17.0/24\"}]],\"routes\":[{\"dst\":\"10.1.0.0/16\"}],\"type\":\"host-local\"},\"isGateway\":true,\"mtu\":1472,"
                + "\"name\":\"cni-flannel\",\"type\":\"bridge\"}");
        });
    }

    @Test
    void gcWithoutSubnetEnvStillCollectsAndSkipsTheForward() throws Exception {
        Files.delete(h.subnetFile);
        Files.createDirectories(h.dataDir);
        Files.writeString(h.dataDir.resolve("stale"), "{}");
        PluginHarness.Outcome o = h.run("GC", h.config("\"cniVersion\":\"1.1.0\",\"cni.dev/valid-attachments\":[]"));
        assertThat(o.exit()).isZero();
        assertThat(o.stderr()).contains("GC: not forwarded to the delegate: failed to load flannel 'subnet.env' file: open " + h.subnetFile);
        assertThat(h.dataDir.resolve("stale")).doesNotExist();
        assertThat(h.calls()).isEmpty();
    }

    @Test
    void statusIsSuccessWithSubnetEnvAndCode50WithoutOrIncomplete() throws Exception {
        String stdin = h.config("\"cniVersion\":\"1.1.0\"");
        PluginHarness.Outcome ok = h.run("STATUS", stdin);
        assertThat(ok.exit()).isZero();
        assertThat(ok.stdout()).isEmpty();
        h.subnetEnv("FLANNEL_MTU=1450\n");
        assertThat(h.run("STATUS", stdin).stdout()).isEqualTo(PluginHarness.error("1.1.0", 50, "failed to load flannel 'subnet.env' file: "
            + h.subnetFile + " is missing FLANNEL_NETWORK, FLANNEL_IPV6_NETWORK, FLANNEL_SUBNET, FLANNEL_IPV6_SUBNET, FLANNEL_IPMASQ."
            + " Check the flannel pod log for this node.", ""));
        Files.delete(h.subnetFile);
        assertThat(h.run("STATUS", stdin).stdout()).isEqualTo(PluginHarness.error("1.1.0", 50, "failed to load flannel 'subnet.env' file: open "
            + h.subnetFile + ": no such file or directory. Check the flannel pod log for this node.", ""));
        assertThat(h.calls()).isEmpty();
    }
}
