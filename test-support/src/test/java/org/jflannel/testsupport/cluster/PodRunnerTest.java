package org.jflannel.testsupport.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The parts of PodRunner that are pure: $(VAR) expansion, the capability set, paths inside a rootfs. */
class PodRunnerTest {

    @Test
    void expandsKubernetesVariableReferencesAndKeepsUnknownOnes() {
        Map<String, String> env = Map.of("POD_NAME", "kube-flannel-ds-x", "PORT", "8081");

        assertThat(PodRunner.expand("--healthz-port=$(PORT)", env)).isEqualTo("--healthz-port=8081");
        assertThat(PodRunner.expand("$(POD_NAME)/$(NOPE) costs $$5", env)).isEqualTo("kube-flannel-ds-x/$(NOPE) costs $5");
    }

    @Test
    void unprivilegedContainerThatAddsCapabilitiesGetsExactlyThose() {
        Container c = new ContainerBuilder().withName("kube-flannel").withNewSecurityContext().withPrivileged(false)
                .withNewCapabilities().addToAdd("NET_ADMIN", "NET_RAW").addToDrop("MKNOD").endCapabilities()
                .endSecurityContext().build();

        assertThat(PodRunner.capabilities(c)).hasValue("-all,+net_admin,+net_raw");
    }

    @Test
    void containerWithoutAddedCapabilitiesGetsTheRuntimeDefaultsMinusDropped() {
        Container plain = new ContainerBuilder().withName("install-cni").build();
        Container dropping = new ContainerBuilder().withName("c").withNewSecurityContext().withNewCapabilities()
                .addToDrop("MKNOD").endCapabilities().endSecurityContext().build();

        assertThat(PodRunner.capabilities(plain).orElseThrow()).startsWith("-all,").contains("+chown", "+net_raw", "+mknod")
                .doesNotContain("+net_admin", "+sys_admin");
        assertThat(PodRunner.capabilities(dropping).orElseThrow()).contains("+chown").doesNotContain("+mknod");
    }

    @Test
    void dropAllKeepsOnlyWhatIsAddedAndPrivilegedKeepsEverything() {
        Container dropAll = new ContainerBuilder().withName("c").withNewSecurityContext().withNewCapabilities()
                .addToDrop("ALL").addToAdd("NET_ADMIN").endCapabilities().endSecurityContext().build();
        Container privileged = new ContainerBuilder().withName("c").withNewSecurityContext().withPrivileged(true)
                .endSecurityContext().build();

        assertThat(PodRunner.capabilities(dropAll)).hasValue("-all,+net_admin");
        assertThat(PodRunner.capabilities(privileged)).isEmpty();
    }

    @Test
    void quotesForShWithSingleQuotesInside() {
        assertThat(PodRunner.q("it's")).isEqualTo("'it'\\''s'");
    }

    @Test
    void followsAbsoluteLinksInsideTheRootfsNotOnThisMachine(@TempDir Path root) throws Exception {
        Files.createDirectories(root.resolve("run"));
        Files.createDirectories(root.resolve("var"));
        Files.createSymbolicLink(root.resolve("var/run"), Path.of("/run"));
        Files.createSymbolicLink(root.resolve("etc"), Path.of("../nowhere/../usr/etc"));

        assertThat(RootfsPaths.resolve(root, "/var/run/secrets/kubernetes.io/serviceaccount"))
                .isEqualTo("run/secrets/kubernetes.io/serviceaccount");
        assertThat(RootfsPaths.resolve(root, "/etc/kube-flannel/")).isEqualTo("usr/etc/kube-flannel");
        assertThat(RootfsPaths.resolve(root, "/../../opt/cni/bin")).isEqualTo("opt/cni/bin");
    }
}
