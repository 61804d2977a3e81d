package org.jflannel.backend.ipip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jflannel.core.LeaseEvent;
import org.jflannel.linuxnet.netlink.NetlinkEvent;
import org.jflannel.linuxnet.netlink.NetlinkMonitor;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.Test;

/**
 * The ipip backend against a real kernel's ipip (throwaway namespaces, iproute2 as the witness). This
 * project's machines have no ipip module, so these run in Debian 12's kernel under qemu only
 * ({@link IpipKernelVmIT}); the name matches neither test tier's pattern.
 */
class IpipKernelInVm {
    /** Generous: the VM is emulated (TCG). */
    static final Duration LIMIT = Duration.ofSeconds(60);
    static final String R2 = IpipNode.tunnelRoute("10.244.2.0/24", "198.51.100.2");
    static final String R3 = IpipNode.tunnelRoute("10.244.3.0/24", "198.51.100.3");

    @Test
    void deviceHasUpstreamsAttributesAndTheLeaseNoBackendData() throws Exception {
        try (IpipNode node = IpipNode.create()) {
            IpipNetwork n = node.register(IpipNode.CONF, "10.244.1.0/24");

            var dev = node.device();
            assertThat(dev.path("linkinfo").path("info_kind").asText()).as(dev.toString()).isEqualTo("ipip");
            assertThat(dev.get("mtu").asInt()).as("external MTU - 20").isEqualTo(1480);
            assertThat(n.mtu()).as("FLANNEL_MTU").isEqualTo(1480);
            assertThat(dev.path("flags").toString()).contains("\"UP\"");
            String text = node.ip("-d", "link", "show", "dev", "flannel.ipip");
            assertThat(text).contains("remote any").contains("local " + node.addr).contains("ttl inherit").contains("nopmtudisc");
            assertThat(node.deviceAddresses()).containsExactly("10.244.1.0/32");
            var attrs = node.subnets.published();
            assertThat(attrs.backendType()).isEqualTo("ipip");
            assertThat(attrs.backendData()).as("no backend data").isNull();
            assertThat(attrs.publicIp()).isEqualTo(Leases.ip(node.addr));
            assertThat(attrs.publicIpv6()).isNull();
        }
    }

    @Test
    void peersAddedGetOnlinkRoutesThroughTheTunnelAndRemovedLoseThem() throws Exception {
        try (IpipNode node = IpipNode.create()) {
            IpipNetwork n = node.register(IpipNode.CONF, "10.244.1.0/24");
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "198.51.100.2")),
                    LeaseEvent.added(Leases.v4("10.244.3.0/24", "198.51.100.3")),
                    LeaseEvent.added(Leases.typed("10.244.4.0/24", "198.51.100.4", "vxlan")));

            assertThat(node.routes()).containsExactlyInAnyOrder(R2, R3);
            assertThat(n.peers()).isEqualTo(2);

            node.apply(LeaseEvent.removed(Leases.v4("10.244.2.0/24", "198.51.100.2")));
            assertThat(node.routes()).containsExactly(R3);

            node.apply(LeaseEvent.added(Leases.v4("10.244.3.0/24", "198.51.100.33"))); // the peer moved
            assertThat(node.routes()).containsExactly(IpipNode.tunnelRoute("10.244.3.0/24", "198.51.100.33"));
        }
    }

    @Test
    void directRoutingSendsPeersOnOurSegmentOutOfTheExternalInterface() throws Exception {
        try (IpipNode node = IpipNode.create()) {
            node.register(IpipNode.DIRECT_CONF, "10.244.1.0/24");
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "192.0.2.12")),
                    LeaseEvent.added(Leases.v4("10.244.3.0/24", "198.51.100.3")));

            assertThat(node.routes()).containsExactlyInAnyOrder(IpipNode.directRoute("10.244.2.0/24", "192.0.2.12"), R3);

            node.apply(LeaseEvent.removed(Leases.v4("10.244.2.0/24", "192.0.2.12")));
            assertThat(node.routes()).containsExactly(R3);
        }
    }

    @Test
    void aRouteDeletedByHandComesBackThroughTheNetlinkEvent() throws Exception {
        try (IpipNode node = IpipNode.create()) {
            IpipNetwork n = node.register(IpipNode.CONF, "10.244.1.0/24");
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "198.51.100.2")),
                    LeaseEvent.added(Leases.v4("10.244.3.0/24", "198.51.100.3")));

            node.ip("route", "del", "10.244.2.0/24", "dev", "flannel.ipip");

            Wait.until("the route back", LIMIT, () -> node.routes().contains(R2));
            assertThat(node.routes()).containsExactlyInAnyOrder(R2, R3);
            Wait.until("the repair counted", LIMIT, () -> n.counters().repairs() > 0);
        }
    }

    @Test
    void aDeletedDeviceComesBackWithItsAddressAndEveryRoute() throws Exception {
        try (IpipNode node = IpipNode.create()) {
            node.register(IpipNode.CONF, "10.244.1.0/24");
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "198.51.100.2")),
                    LeaseEvent.added(Leases.v4("10.244.3.0/24", "198.51.100.3")));
            int before = node.deviceIndex();

            node.ip("link", "del", "flannel.ipip");

            Wait.until("the device and its routes back", LIMIT, () -> node.link("flannel.ipip") != null
                    && node.routes().containsAll(List.of(R2, R3)));
            assertThat(node.deviceIndex()).isNotEqualTo(before);
            assertThat(node.deviceAddresses()).containsExactly("10.244.1.0/32");
            assertThat(node.device().get("mtu").asInt()).isEqualTo(1480);
        }
    }

    @Test
    void addressTakenAwayAndDeviceSetDownArePutRight() throws Exception {
        try (IpipNode node = IpipNode.create()) {
            node.register(IpipNode.CONF, "10.244.1.0/24");
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "198.51.100.2")));

            node.ip("addr", "del", "10.244.1.0/32", "dev", "flannel.ipip");
            Wait.until("the address back", LIMIT, () -> node.deviceAddresses().contains("10.244.1.0/32"));

            node.ip("link", "set", "flannel.ipip", "down"); // the kernel drops the routes through it
            Wait.until("up again with its route", LIMIT, () -> node.device().path("flags").toString().contains("\"UP\"")
                    && node.routes().contains(R2));
        }
    }

    @Test
    void restartAdoptsDeviceAndRoutesWithoutABlip() throws Exception {
        try (IpipNode node = IpipNode.create()) {
            node.register(IpipNode.CONF, "10.244.1.0/24");
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "198.51.100.2")),
                    LeaseEvent.added(Leases.v4("10.244.3.0/24", "198.51.100.3")));
            int index = node.deviceIndex();
            node.network.close(); // the daemon stops: device and routes stay
            assertThat(node.routes()).containsExactlyInAnyOrder(R2, R3);

            List<NetlinkEvent> seen = new CopyOnWriteArrayList<>();
            try (NetlinkMonitor m = node.inside(() -> NetlinkMonitor.start("ipip-test-mon", IpipWatch.GROUPS, seen::add))) {
                node.register(IpipNode.CONF, "10.244.1.0/24");
                node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "198.51.100.2")),
                        LeaseEvent.added(Leases.v4("10.244.3.0/24", "198.51.100.3")));
                node.reconcile();
                node.ip("link", "add", "mark0", "type", "dummy"); // a marker: every earlier event was delivered before it
                Wait.until("the marker seen", LIMIT, () -> seen.stream()
                        .anyMatch(e -> e instanceof NetlinkEvent.LinkEvent le && le.link().name().equals("mark0")));
            }
            assertThat(node.deviceIndex()).as("the same device").isEqualTo(index);
            assertThat(node.routes()).containsExactlyInAnyOrder(R2, R3);
            assertThat(seen).as("nothing deleted on restart").noneMatch(NetlinkEvent::deleted);
        }
    }

    @Test
    void strayRoutesOfVanishedPeersGoOnceTheFirstLeaseListIsApplied() throws Exception {
        try (IpipNode node = IpipNode.create()) {
            node.register(IpipNode.CONF, "10.244.1.0/24");
            node.ip("route", "add", "10.244.7.0/24", "via", "198.51.100.7", "dev", "flannel.ipip", "onlink", "proto", "boot");
            node.ip("route", "add", "10.99.0.0/24", "via", "198.51.100.9", "dev", "flannel.ipip", "onlink", "proto", "boot");

            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "198.51.100.2"))); // the first complete list
            node.reconcile();

            assertThat(node.routes()).containsExactlyInAnyOrder(R2,
                    IpipNode.tunnelRoute("10.99.0.0/24", "198.51.100.9")); // outside the Network: not ours
        }
    }

    @Test
    void anIncompatibleIpipDeviceIsRecreatedAndAnotherKindRefused() throws Exception {
        try (IpipNode node = IpipNode.create()) {
            node.ip("link", "add", "flannel.ipip", "type", "ipip", "local", "192.0.2.99", "remote", "203.0.113.1");
            node.register(IpipNode.CONF, "10.244.1.0/24");
            String text = node.ip("-d", "link", "show", "dev", "flannel.ipip");
            assertThat(text).contains("remote any").contains("local " + node.addr);
        }
        try (IpipNode node = IpipNode.create()) {
            node.ip("link", "add", "flannel.ipip", "type", "dummy");
            assertThatThrownBy(() -> node.register(IpipNode.CONF, "10.244.1.0/24"))
                    .hasMessageContaining("flannel.ipip isn't an ipip mode device, please remove device and try again");
            assertThat(node.device().path("linkinfo").path("info_kind").asText()).as("the user's device is left alone").isEqualTo("dummy");
        }
    }

    /** Two nodes on one veth: a ping between their flannel.ipip addresses crosses the tunnel, protocol 4 on the wire. */
    @Test
    void twoNodesReachEachOtherThroughTheTunnel() throws Exception {
        IpipNode[] pair = IpipNode.pair();
        try (IpipNode a = pair[0]; IpipNode b = pair[1]) {
            a.register(IpipNode.CONF, "10.244.1.0/24");
            b.register(IpipNode.CONF, "10.244.2.0/24");
            a.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", b.addr)));
            b.apply(LeaseEvent.added(Leases.v4("10.244.1.0/24", a.addr)));
            long before = ipipPackets(b);

            String ping = a.execAnyExit("ping", "-c", "3", "-W", "5", "-I", "10.244.1.0", "10.244.2.0");

            assertThat(ping).contains("3 received");
            assertThat(ipipPackets(b) - before).as("IPv4-in-IPv4 packets received by b").isGreaterThanOrEqualTo(3);
            assertThat(a.routes()).containsExactly(IpipNode.tunnelRoute("10.244.2.0/24", b.addr));
        }
    }

    /** Packets received on flannel.ipip, from sysfs inside the namespace. */
    private static long ipipPackets(IpipNode n) throws Exception {
        return Long.parseLong(n.exec("cat", "/sys/class/net/flannel.ipip/statistics/rx_packets").strip());
    }
}
