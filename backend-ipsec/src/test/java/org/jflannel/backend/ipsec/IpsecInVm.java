package org.jflannel.backend.ipsec;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.jflannel.core.LeaseEvent;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.Test;

/**
 * Two nodes of ours pinging over IPsec: runs only inside the kernel VM (Debian's kernel has ESP; this
 * host's has none), started by {@link IpsecVmIT}; its name matches neither test tier's pattern. Each node's
 * charon negotiates with the other's (IKEv2, the PSK, both initiating), the kernel's SAs carry the pods'
 * traffic between the public IPs (ESP, or ESP in UDP 4500 with UDPEncap); a removed peer's policies and
 * SAs go, and its traffic with them.
 */
class IpsecInVm {

    @Test
    void twoNodesPingOverEsp() throws Exception {
        twoNodes(false);
    }

    @Test
    void twoNodesPingOverEspInUdp() throws Exception {
        twoNodes(true);
    }

    private static void twoNodes(boolean encap) throws Exception {
        // not under /run: charon's wrapper puts a tmpfs of its own there (its fixed pidfile)
        Path dir = Files.createTempDirectory(Path.of("/var/tmp"), "ipsvm");
        IpsecNode[] nodes = IpsecNode.pair();
        try (IpsecNode a = nodes[0]; IpsecNode b = nodes[1]) {
            a.ip("addr", "add", "10.244.1.1/32", "dev", "lo");
            b.ip("addr", "add", "10.244.2.1/32", "dev", "lo");
            a.ip("route", "add", "10.244.0.0/16", "dev", "ul0", "src", "10.244.1.1");
            b.ip("route", "add", "10.244.0.0/16", "dev", "ul0", "src", "10.244.2.1");
            String conf = IpsecNode.conf(encap ? ",\"UDPEncap\":true" : "");
            IpsecNetwork na = a.register(conf, "10.244.1.0/24", Files.createDirectory(dir.resolve("a")));
            IpsecNetwork nb = b.register(conf, "10.244.2.0/24", Files.createDirectory(dir.resolve("b")));
            assertThat(na.mtu()).isEqualTo(encap ? 1415 : 1423);
            a.apply(LeaseEvent.added(Leases.lease("10.244.2.0/24", "192.0.2.2")));
            b.apply(LeaseEvent.added(Leases.lease("10.244.1.0/24", "192.0.2.1")));

            Wait.until("ping a -> b over ipsec", Duration.ofMinutes(3),
                    () -> a.execAnyExit("ping", "-c", "1", "-W", "2", "-I", "10.244.1.1", "10.244.2.1").contains(" 0% packet loss"));
            assertThat(b.execAnyExit("ping", "-c", "3", "-W", "2", "-I", "10.244.2.1", "10.244.1.1")).contains(" 0% packet loss");
            String states = a.ip("xfrm", "state");
            System.out.println("a: ip xfrm state\n" + states.replaceAll("0x[0-9a-f]{16,}", "<key>"));
            assertThat(states).contains("src 192.0.2.1 dst 192.0.2.2", "src 192.0.2.2 dst 192.0.2.1", "proto esp", "reqid 11", "mode tunnel");
            if (encap) {
                assertThat(states).contains("encap type espinudp sport 4500 dport 4500");
            } else {
                assertThat(states).doesNotContain("espinudp");
            }

            a.apply(LeaseEvent.removed(Leases.lease("10.244.2.0/24", "192.0.2.2")));
            assertThat(a.policies()).isEmpty();
            assertThat(a.execAnyExit("ping", "-c", "1", "-W", "2", "-I", "10.244.1.1", "10.244.2.1"))
                    .as("b's in policy wants ESP from a: a's clear packets are dropped").contains("100% packet loss");
        } finally {
            System.out.println("charon a:\n" + CharonNs.log(dir.resolve("a")) + "\ncharon b:\n" + CharonNs.log(dir.resolve("b")));
        }
    }
}
