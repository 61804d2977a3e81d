package org.jflannel.flanneld.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.flanneld.health.Metrics;
import org.jflannel.flanneld.testing.ThrowawayNs;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 23: peer probing on host-gw. Two node namespaces on one veth underlay; the peer's cni0 bridge carries
 * its subnet's first address, our node has the route host-gw programs (the peer's subnet via its public IP).
 * The prober must find the peer reachable, then classify what the peer's firewall breaks: big probes only
 * (MTU black hole), its pod subnet only (overlay blocked), everything (underlay unreachable).
 */
@Tag("netns")
class ProberHostGwIT {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @Test
    void aHostGwPeerIsProbedAlongItsRouteAndEachBreakageGetsItsCause() throws Exception {
        try (ThrowawayNs node = ThrowawayNs.create("jfhg");
             ThrowawayNs peer = ThrowawayNs.create("jfhp")) {
            node.exec("ip", "link", "set", "lo", "up");
            peer.exec("ip", "link", "set", "lo", "up");
            node.exec("ip", "link", "add", "eth0", "type", "veth", "peer", "name", "eth0p", "netns", peer.name());
            node.exec("ip", "addr", "add", "192.0.2.10/24", "dev", "eth0");
            node.exec("ip", "link", "set", "eth0", "up");
            peer.exec("ip", "addr", "add", "192.0.2.11/24", "dev", "eth0p");
            peer.exec("ip", "link", "set", "eth0p", "up");
            peer.exec("ip", "link", "add", "cni0", "type", "bridge");
            peer.exec("ip", "addr", "add", "10.244.2.1/24", "dev", "cni0");
            peer.exec("ip", "link", "set", "cni0", "up");
            node.exec("ip", "route", "add", "10.244.2.0/24", "via", "192.0.2.11", "dev", "eth0");

            Prober prober = node.netns().call(() -> Prober.start(
                    new ProbeSettings(Duration.ofSeconds(1), Duration.ofSeconds(1), 1500, null, true), new Metrics()));
            try {
                Lease lease = new Lease(Ip4Net.parse("10.244.2.0/24"), null, new LeaseAttrs(
                        (Inet4Address) InetAddress.getByName("192.0.2.11"), null, "host-gw", null, null), null);
                prober.apply(List.of(LeaseEvent.added(lease)));
                await(prober, "reachable");
                assertThat(prober.statuses()).singleElement().satisfies(s -> {
                    assertThat(s.target().overlay().getHostAddress()).isEqualTo("10.244.2.1");
                    assertThat(s.small().ok()).isTrue();
                    assertThat(s.fullSize().ok()).isTrue();
                });

                peer.exec("iptables", "-I", "INPUT", "-d", "10.244.2.1", "-p", "icmp", "-m", "length",
                        "--length", "1000:65535", "-j", "DROP");
                await(prober, "mtu_black_hole");

                peer.exec("iptables", "-I", "INPUT", "-d", "10.244.2.1", "-p", "icmp", "-j", "DROP");
                await(prober, "overlay_blocked");

                peer.exec("iptables", "-I", "INPUT", "-p", "icmp", "-j", "DROP");
                await(prober, "underlay_unreachable");

                peer.exec("iptables", "-F", "INPUT");
                await(prober, "reachable");
            } finally {
                prober.close();
            }
        }
    }

    private static void await(Prober prober, String verdict) throws Exception {
        Wait.until("the peer's verdict becomes " + verdict, WAIT,
                () -> prober.statuses().stream().map(PeerStatus::verdict).toList(), v -> v.equals(List.of(verdict)));
    }
}
