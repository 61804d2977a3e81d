package org.jflannel.linuxnet.netns;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.jflannel.linuxnet.Cmd;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.TestNs;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.sys.Sysctl;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("netns")
class NetNsIT {

    @Test
    void createdNamespaceIsSeenByIpAndWorkRunsInsideIt() throws Exception {
        Path hostNs = Files.readSymbolicLink(Path.of("/proc/thread-self/ns/net"));
        String name;
        try (TestNs t = TestNs.create("nsx")) {
            name = t.name();
            assertThat(Cmd.run("ip", "netns", "list")).contains(name);
            Path inside = t.ns.call(() -> Files.readSymbolicLink(Path.of("/proc/thread-self/ns/net")));
            assertThat(inside).isNotEqualTo(hostNs);
            assertThat(t.ns.call(() -> t.ns.call(() -> Thread.currentThread().getName()))).isEqualTo("netns-" + name);
            assertThat(Files.readSymbolicLink(Path.of("/proc/thread-self/ns/net"))).isEqualTo(hostNs);
            assertThat(t.exec("readlink", "/proc/self/ns/net").strip()).isEqualTo(inside.toString());

            assertThatThrownBy(() -> t.ns.run(() -> {
                throw new IOException("from inside");
            })).isInstanceOf(IOException.class).hasMessage("from inside");
            assertThatThrownBy(() -> NetNs.create(name))
                    .isInstanceOfSatisfying(NetlinkException.class, e -> assertThat(e.errnoName()).isEqualTo("EEXIST"))
                    .hasMessageContaining(name);
        }
        assertThat(Cmd.run("ip", "netns", "list")).doesNotContain(name);
        NetNs.delete(name); // quiet when gone
        assertThatThrownBy(() -> NetNs.open(name))
                .isInstanceOfSatisfying(NetlinkException.class, e -> assertThat(e.errnoName()).isEqualTo("ENOENT"))
                .hasMessageContaining(name);
    }

    @Test
    void sysctlReadsAndWritesTheNamespacesOwnValues() throws Exception {
        String hostForward = Sysctl.read("net.ipv4.ip_forward");
        try (TestNs t = TestNs.create("sys")) {
            String wanted = hostForward.equals("1") ? "0" : "1";
            t.ns.run(() -> {
                Sysctl.write("net/ipv4/ip_forward", wanted);
                assertThat(Sysctl.read("net.ipv4.ip_forward")).isEqualTo(wanted);
                try (RtNetlink nl = RtNetlink.open()) {
                    nl.createBridge("br.1");
                }
                Sysctl.write("net/ipv6/conf/br.1/accept_ra", "0");
                assertThat(Sysctl.read("net/ipv6/conf/br.1/accept_ra")).isEqualTo("0");
            });
            assertThat(t.exec("sysctl", "-n", "net.ipv4.ip_forward").strip()).isEqualTo(wanted);
            assertThat(t.exec("cat", "/proc/sys/net/ipv6/conf/br.1/accept_ra").strip()).isEqualTo("0");
            assertThat(Sysctl.read("net.ipv4.ip_forward")).isEqualTo(hostForward);
            assertThatThrownBy(() -> Sysctl.read("net.ipv4.no_such_key"))
                    .isInstanceOf(IOException.class).hasMessageContaining("net.ipv4.no_such_key");
        }
    }
}
