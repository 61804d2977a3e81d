package org.jflannel.testsupport.netns;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.netns.NetNs;
import org.junit.jupiter.api.AfterAll;

class NetnsExtensionIT {
    private static Path seen;

    @NetnsTest
    void injectsAFreshNamedNamespace(NetNs node, NetNs other) throws Exception {
        assertThat(node.name()).isNotEqualTo(other.name()).hasSizeLessThanOrEqualTo(15);
        assertThat(Files.exists(node.path())).isTrue();
        seen = node.path();
        int links = node.call(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                return nl.links().size();
            }
        });
        assertThat(links).isEqualTo(1); // only lo in a fresh namespace
    }

    @AfterAll
    static void namespaceWasDeleted() {
        assertThat(seen).isNotNull();
        assertThat(Files.exists(seen)).isFalse();
    }
}
