package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import org.jflannel.backend.udp.UdpCounters.Drop;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.packet.Packets;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The kernel datapath between two nodes on a veth underlay, with everything real: the programs
 * pass the kernel's verifier and carry ping and checked TCP streams both ways as whole
 * super-packets (the packet threads see none of it), leave what they must to the packet threads
 * (a spoofed source, a removed peer, a node that does not decapsulate in its kernel), and go with
 * close; a peer whose new lease no longer says it decapsulates in its kernel goes back to the
 * packet threads.
 */
@Tag("netns")
class UdpKernelPathIT {

    @Test
    void bothKernelsCarryTheTrafficAndLeaveTheExceptionsToThePacketThreads() throws Exception {
        try (UdpNode a = UdpNode.create("uka"); UdpNode b = UdpNode.create("ukb")) {
            UdpTwoNodesIT.join(a, b);
            UdpNetwork na = a.register("10.244.1.0/24", "ul0", "192.0.2.1", UdpOptions.withKernel());
            UdpNetwork nb = b.register("10.244.2.0/24", "ul0", "192.0.2.2", UdpOptions.withKernel());
            assertThat(na.kernelDatapath()).as("kernel datapath attached in A").isTrue();
            assertThat(nb.kernelDatapath()).isTrue();
            assertThat(na.kernelPath()).isEqualTo("full");
            assertThat(a.subnets.published().backendData()).isEqualTo("{\"KernelDecap\":true}");
            assertThat(a.subnets.published().backendType()).isEmpty();

            a.apply(LeaseEvent.added(Leases.published("10.244.2.0/24", b.subnets.published())));
            b.apply(LeaseEvent.added(Leases.published("10.244.1.0/24", a.subnets.published())));
            assertThat(na.kernelPeers()).isEqualTo(1);

            assertThat(a.exec("ping", "-c", "3", "-W", "2", "-I", "10.244.1.1", "10.244.2.1")).contains("3 received");
            awaitProofs(na, nb);
            UdpTwoNodesIT.assertTcpStreamArrivesIntact(a, b, "10.244.2.1", 32 << 20);
            UdpTwoNodesIT.assertTcpStreamArrivesIntact(b, a, "10.244.1.1", 32 << 20);
            long[] ka = na.kernelPackets();
            long[] kb = nb.kernelPackets();
            assertThat(ka[KernelPrograms.COUNT_ENCAP]).as("packets A's kernel encapsulated").isGreaterThanOrEqualTo(3);
            assertThat(kb[KernelPrograms.COUNT_DECAP]).as("packets B's kernel decapsulated").isGreaterThanOrEqualTo(3);
            assertThat(ka[KernelPrograms.COUNT_FAILED] + kb[KernelPrograms.COUNT_FAILED]).isZero();
            // 32 MB each way in fewer packets than 1,472-byte segments would need: super-packets crossed whole
            assertThat(na.counters().packetsToPeers() + nb.counters().packetsToPeers()).as("sent by the packet threads").isZero();
            assertThat(na.counters().packetsFromPeers() + nb.counters().packetsFromPeers()).as("taken by the packet threads").isZero();
            // 32 MB each way in far fewer packets than 1,472-byte segments would need: super-packets crossed whole
            assertThat(kb[KernelPrograms.COUNT_DECAP]).isLessThan((32 << 20) / 1420 / 4);

            // a spoofed inner source: the decap program leaves it to the socket, which drops and counts it
            ByteBuffer spoofed = Packets.ipv4("10.244.9.9", "10.244.1.1", 17, 64, 8);
            byte[] bytes = new byte[spoofed.remaining()];
            spoofed.get(bytes);
            b.inside(() -> {
                try (DatagramSocket s = new DatagramSocket(new InetSocketAddress("192.0.2.2", 0))) {
                    s.send(new DatagramPacket(bytes, bytes.length, new InetSocketAddress("192.0.2.1", 8285)));
                }
                return null;
            });
            Wait.until("spoofed datagram dropped by A's packet threads", Duration.ofSeconds(10),
                    () -> na.counters().drops(Drop.SOURCE_MISMATCH) == 1);

            // the peer goes: its route leaves the map, the packet threads answer with net-unreachable
            a.apply(LeaseEvent.removed(Leases.published("10.244.2.0/24", b.subnets.published())));
            assertThat(na.kernelPeers()).isZero();
            Throwable refused = a.inside(() -> catchThrowable(() -> {
                try (Socket s = new Socket()) {
                    s.connect(new InetSocketAddress("10.244.2.1", 80), 10_000);
                }
            }));
            assertThat(refused).isNotNull().isNotInstanceOf(SocketTimeoutException.class);
            assertThat(refused.getMessage()).containsIgnoringCase("unreachable");

            na.close();
            nb.close();
            assertThat(a.link("flannel0")).isNull();
        }
    }

    /**
     * {@code encap} ({@link UdpOptions#withKernelEncap()}, the default before session 11 and gpe's fallback: the kernel
     * encapsulates, the packet threads decapsulate), and against a node that decapsulates in its kernel: what the sending kernel
     * leaves as its stack made it (whole TCP super-packets, partial TCP and UDP checksums) arrives
     * intact through the receiving packet threads, and nothing is lost between the counters.
     */
    @Test
    void theKernelEncapsulatesAndThePacketThreadsTakeWholeSuperPacketsAndPartialChecksums() throws Exception {
        try (UdpNode a = UdpNode.create("uea"); UdpNode b = UdpNode.create("ueb")) {
            UdpTwoNodesIT.join(a, b);
            UdpNetwork na = a.register("10.244.1.0/24", "ul0", "192.0.2.1", UdpOptions.withKernelEncap());
            UdpNetwork nb = b.register("10.244.2.0/24", "ul0", "192.0.2.2", UdpOptions.withKernel());
            assertThat(na.kernelDatapath()).isTrue();
            assertThat(a.subnets.published().backendData()).as("A takes kernel-encapsulated datagrams")
                    .isEqualTo("{\"KernelDecap\":true}");
            a.apply(LeaseEvent.added(Leases.published("10.244.2.0/24", b.subnets.published())));
            b.apply(LeaseEvent.added(Leases.published("10.244.1.0/24", a.subnets.published())));

            assertThat(a.exec("ping", "-c", "3", "-W", "2", "-I", "10.244.1.1", "10.244.2.1")).contains("3 received");
            awaitProofs(na, nb);
            UdpTwoNodesIT.assertTcpStreamArrivesIntact(a, b, "10.244.2.1", 32 << 20);
            UdpTwoNodesIT.assertTcpStreamArrivesIntact(b, a, "10.244.1.1", 32 << 20);
            // a UDP datagram from B's stack: its checksum is left partial, and A's packet threads hand it on as such
            assertUdpDatagramArrives(b, a);

            // the last segments and ACKs of the streams may still be crossing: wait until each side has taken all,
            // then assert on that one snapshot (a fresh read could meet a straggler counted on one side only)
            Ledger l = Wait.until("A's packet threads took every packet B's kernel sent, and B's kernel every one A's sent",
                    Duration.ofSeconds(10), () -> Ledger.of(na, nb),
                    x -> x.fromPeersA() == x.kb()[KernelPrograms.COUNT_ENCAP]
                            && x.kb()[KernelPrograms.COUNT_DECAP] == x.ka()[KernelPrograms.COUNT_ENCAP]);
            assertThat(l.ka()[KernelPrograms.COUNT_DECAP]).as("A's kernel decapsulates nothing").isZero();
            assertThat(l.kb()[KernelPrograms.COUNT_ENCAP]).as("B's kernel encapsulated to A").isGreaterThan(3);
            assertThat(l.fromPeersA()).as("A's packet threads took every one of them")
                    .isEqualTo(l.kb()[KernelPrograms.COUNT_ENCAP]);
            assertThat(l.kb()[KernelPrograms.COUNT_DECAP]).as("B's kernel took every packet A's kernel sent")
                    .isEqualTo(l.ka()[KernelPrograms.COUNT_ENCAP]);
            // 32 MB from B in far fewer datagrams than 1,472-byte segments would need: super-packets arrived whole
            assertThat(l.fromPeersA()).isLessThan((32 << 20) / 1420 / 4);
            assertThat(na.counters().drops(Drop.MALFORMED) + na.counters().drops(Drop.TUN_WRITE_FAILED)).isZero();
            na.close();
            nb.close();
        }
    }

    /**
     * {@code JFLANNEL_UDP_KERNEL=gpe} on both nodes: each kernel encapsulates, and decapsulates through its VXLAN-GPE
     * device, so TCP streams both ways arrive intact as super-packets, a UDP datagram with a partial checksum arrives,
     * every packet one kernel sent the other kernel took (the packet threads only what the kernels left them), and the
     * GPE port takes nothing it was not given by the node's own program: a datagram to it from the peer's node is
     * dropped on the underlay, one from a local process at the device's gate. The device goes with close. Strict
     * rp_filter on both nodes: the gate hands packets to flannel0, whose routes cover the peer's subnet.
     */
    @Test
    void theKernelDecapsulatesThroughAVxlanGpeDeviceAndItsPortTakesNothingElse() throws Exception {
        try (UdpNode a = UdpNode.create("uga"); UdpNode b = UdpNode.create("ugb")) {
            UdpTwoNodesIT.join(a, b);
            for (UdpNode n : new UdpNode[] {a, b}) { // strict reverse-path filtering everywhere, new devices included
                n.exec("sysctl", "-qw", "net.ipv4.conf.all.rp_filter=1", "net.ipv4.conf.default.rp_filter=1");
            }
            UdpNetwork na = a.register("10.244.1.0/24", "ul0", "192.0.2.1", UdpOptions.withKernelGpe());
            UdpNetwork nb = b.register("10.244.2.0/24", "ul0", "192.0.2.2", UdpOptions.withKernelGpe());
            assertThat(na.kernelDatapath()).isTrue();
            assertThat(a.link("flannel0-gpe")).as("A's GPE device").isNotNull();
            assertThat(b.link("flannel0-gpe")).isNotNull();
            a.apply(LeaseEvent.added(Leases.published("10.244.2.0/24", b.subnets.published())));
            b.apply(LeaseEvent.added(Leases.published("10.244.1.0/24", a.subnets.published())));

            assertThat(na.kernelGpeConfirmed() || nb.kernelGpeConfirmed()).as("on trial until a datagram has passed the gate").isFalse();
            assertThat(na.kernelPath()).isEqualTo("gpe_trial");
            assertThat(a.exec("ping", "-c", "3", "-W", "2", "-I", "10.244.1.1", "10.244.2.1")).contains("3 received");
            Wait.until("each kernel proved to the other, and each GPE path through its trial", Duration.ofSeconds(20), () -> {
                a.execAnyExit("ping", "-c", "3", "-i", "0.2", "-W", "1", "-I", "10.244.1.1", "10.244.2.1");
                return na.kernelGpeConfirmed() && nb.kernelGpeConfirmed();
            });
            awaitProofs(na, nb);
            UdpTwoNodesIT.assertTcpStreamArrivesIntact(a, b, "10.244.2.1", 32 << 20);
            UdpTwoNodesIT.assertTcpStreamArrivesIntact(b, a, "10.244.1.1", 32 << 20);
            assertUdpDatagramArrives(b, a);

            // both ledgers balanced, and each gate passed every datagram its node rewrote: all in one snapshot
            Ledger l = Wait.until("every packet one kernel sent, the other kernel or the packet threads took, and each gate"
                    + " passed every datagram its node rewrote", Duration.ofSeconds(10), () -> Ledger.of(na, nb),
                    x -> x.ka()[KernelPrograms.COUNT_ENCAP] == x.kb()[KernelPrograms.COUNT_DECAP] + x.fromPeersB() - x.toPeersA()
                            && x.kb()[KernelPrograms.COUNT_ENCAP] == x.ka()[KernelPrograms.COUNT_DECAP] + x.fromPeersA() - x.toPeersB()
                            && x.ka()[KernelPrograms.COUNT_GATE] == x.ka()[KernelPrograms.COUNT_DECAP]
                            && x.kb()[KernelPrograms.COUNT_GATE] == x.kb()[KernelPrograms.COUNT_DECAP]);
            long[] ka = l.ka();
            long[] kb = l.kb();
            assertThat(ka[KernelPrograms.COUNT_FAILED] + kb[KernelPrograms.COUNT_FAILED] + ka[KernelPrograms.COUNT_REFUSED]
                    + kb[KernelPrograms.COUNT_REFUSED]).isZero();
            // 32 MB each way in far fewer packets than 1,472-byte segments would need: super-packets crossed whole
            assertThat(ka[KernelPrograms.COUNT_DECAP]).as("packets A's kernel took").isGreaterThan(3).isLessThan((32 << 20) / 1420 / 4);
            assertThat(kb[KernelPrograms.COUNT_DECAP]).isGreaterThan(3).isLessThan((32 << 20) / 1420 / 4);
            assertThat(l.fromPeersA() + l.fromPeersB())
                    .as("what the packet threads took (before the proofs)").isLessThan(100);
            assertThat(ka[KernelPrograms.COUNT_GATE]).as("every datagram A rewrote passed its gate")
                    .isEqualTo(ka[KernelPrograms.COUNT_DECAP]);
            assertThat(kb[KernelPrograms.COUNT_GATE]).isEqualTo(kb[KernelPrograms.COUNT_DECAP]);
            assertThat(na.kernelGpe() && nb.kernelGpe()).as("both still on the GPE path").isTrue();
            assertThat(na.kernelPath()).isEqualTo("gpe");
            assertThat(na.kernelCounts().gpeDelivered()).isEqualTo(ka[KernelPrograms.COUNT_GATE]);

            // a well-formed VXLAN-GPE datagram to A's GPE port: from B's node, and from a process on A
            ByteBuffer icmp = Packets.ipv4("10.244.2.7", "10.244.1.1", 1, 64, 8);
            byte[] gpe = new byte[8 + icmp.remaining()];
            gpe[0] = 0x0c;
            gpe[3] = 1;
            icmp.get(gpe, 8, icmp.remaining());
            b.inside(() -> {
                try (DatagramSocket s = new DatagramSocket(new InetSocketAddress("192.0.2.2", 0))) {
                    s.send(new DatagramPacket(gpe, gpe.length, new InetSocketAddress("192.0.2.1", GpePath.DEFAULT_PORT)));
                }
                return null;
            });
            Wait.until("dropped on A's underlay", Duration.ofSeconds(10),
                    () -> na.kernelPackets()[KernelPrograms.COUNT_REFUSED] == 1);
            a.inside(() -> {
                try (DatagramSocket s = new DatagramSocket()) {
                    s.send(new DatagramPacket(gpe, gpe.length, new InetSocketAddress("127.0.0.1", GpePath.DEFAULT_PORT)));
                }
                return null;
            });
            Wait.until("decapsulated by A's GPE device, then dropped at its gate", Duration.ofSeconds(10),
                    () -> na.kernelPackets()[KernelPrograms.COUNT_REFUSED] == 2);
            assertThat(na.kernelPackets()[KernelPrograms.COUNT_DECAP]).as("neither was written by A's program")
                    .isEqualTo(ka[KernelPrograms.COUNT_DECAP]);

            na.close();
            nb.close();
            assertThat(a.link("flannel0-gpe")).as("the GPE device goes with the network").isNull();
        }
    }

    /**
     * {@code JFLANNEL_UDP_GPE_PORT}: A's GPE device on another port than B's (the port is local: the programs rewrite a
     * peer's 8285 datagram to it on the node itself), both paths deliver, and A refuses datagrams to its own port from
     * the underlay, as it does for the default one.
     */
    @Test
    void theGpeDeviceCanBeMovedToAnotherPortOnOneNode() throws Exception {
        int moved = GpePath.DEFAULT_PORT + 1;
        try (UdpNode a = UdpNode.create("uma"); UdpNode b = UdpNode.create("umb")) {
            UdpTwoNodesIT.join(a, b);
            UdpNetwork na = a.register("10.244.1.0/24", "ul0", "192.0.2.1", UdpOptions.withKernelGpe().withGpePort(moved));
            UdpNetwork nb = b.register("10.244.2.0/24", "ul0", "192.0.2.2", UdpOptions.withKernelGpe());
            assertThat(a.ip("-d", "link", "show", "flannel0-gpe")).as("A's GPE device").contains("dstport " + moved);
            assertThat(b.ip("-d", "link", "show", "flannel0-gpe")).contains("dstport " + GpePath.DEFAULT_PORT);
            a.apply(LeaseEvent.added(Leases.published("10.244.2.0/24", b.subnets.published())));
            b.apply(LeaseEvent.added(Leases.published("10.244.1.0/24", a.subnets.published())));
            Wait.until("both GPE paths through their trials", Duration.ofSeconds(20), () -> {
                a.execAnyExit("ping", "-c", "3", "-i", "0.2", "-W", "1", "-I", "10.244.1.1", "10.244.2.1");
                return na.kernelGpeConfirmed() && nb.kernelGpeConfirmed();
            });
            UdpTwoNodesIT.assertTcpStreamArrivesIntact(b, a, "10.244.1.1", 4 << 20);
            assertThat(na.kernelCounts().gpeDelivered()).as("A's gate on port %d delivered", moved).isPositive();
            b.inside(() -> {
                try (DatagramSocket s = new DatagramSocket(new InetSocketAddress("192.0.2.2", 0))) {
                    // 64 bytes: long enough for the program to read the headers it checks
                    s.send(new DatagramPacket(new byte[64], 64, new InetSocketAddress("192.0.2.1", moved)));
                }
                return null;
            });
            Wait.until("dropped on A's underlay", Duration.ofSeconds(10), () -> na.kernelCounts().refused() == 1);
        }
    }

    /**
     * A node whose firewall drops UDP to the GPE port (the rewritten datagrams cross its INPUT chain): the datagrams it
     * rewrites never reach its GPE device's gate, so it swaps its ingress program for the encapsulate-only one within
     * a few seconds of traffic, and from then on its packet threads take the peer's kernel datagrams: ping and TCP both
     * ways intact. Fails without {@link GpePath#check} (the peer's kernel datagrams would be lost for good).
     */
    @Test
    void aNodeWhoseFirewallDropsTheGpePortFallsBackToThePacketThreads() throws Exception {
        try (UdpNode a = UdpNode.create("ufa"); UdpNode b = UdpNode.create("ufb")) {
            UdpTwoNodesIT.join(a, b);
            a.exec("iptables", "-A", "INPUT", "-p", "udp", "--dport", String.valueOf(GpePath.DEFAULT_PORT), "-j", "DROP");
            UdpNetwork na = a.register("10.244.1.0/24", "ul0", "192.0.2.1", UdpOptions.withKernelGpe());
            UdpNetwork nb = b.register("10.244.2.0/24", "ul0", "192.0.2.2", UdpOptions.withKernelGpe());
            assertThat(na.kernelGpe()).as("A starts on the GPE path").isTrue();
            a.apply(LeaseEvent.added(Leases.published("10.244.2.0/24", b.subnets.published())));
            b.apply(LeaseEvent.added(Leases.published("10.244.1.0/24", a.subnets.published())));

            Wait.until("A fell back to its packet threads", Duration.ofSeconds(30), () -> {
                a.execAnyExit("ping", "-c", "5", "-i", "0.2", "-W", "1", "-I", "10.244.1.1", "10.244.2.1");
                return !na.kernelGpe();
            });
            assertThat(nb.kernelGpe()).as("B's path delivers: B stays").isTrue();
            assertThat(na.kernelPath()).as("A's path after the fallback").isEqualTo("encap");
            // on trial A rewrote one datagram a second: only those few were lost before it fell back (ping sent ~5 a second)
            assertThat(na.kernelPackets()[KernelPrograms.COUNT_DECAP]).as("datagrams A's program rewrote, all lost")
                    .isBetween((long) GpePath.LOST_TO_FALL_BACK, (long) GpePath.LOST_TO_FALL_BACK + 1);
            assertThat(a.exec("ping", "-c", "3", "-W", "2", "-I", "10.244.1.1", "10.244.2.1")).contains("3 received");
            long fromPeers = na.counters().packetsFromPeers();
            UdpTwoNodesIT.assertTcpStreamArrivesIntact(a, b, "10.244.2.1", 8 << 20);
            UdpTwoNodesIT.assertTcpStreamArrivesIntact(b, a, "10.244.1.1", 8 << 20);
            assertThat(na.counters().packetsFromPeers()).as("A's packet threads take B's datagrams now").isGreaterThan(fromPeers);
            assertThat(na.kernelPackets()[KernelPrograms.COUNT_GATE]).as("nothing passed A's gate").isZero();
            assertThat(nb.kernelPackets()[KernelPrograms.COUNT_GATE]).as("B's gate delivered").isPositive();
        }
    }

    @Test
    void aPeerThatStopsDecapsulatingInItsKernelIsSentToByThePacketThreadsOnceItsLeaseSaysSo() throws Exception {
        try (UdpNode a = UdpNode.create("uke"); UdpNode b = UdpNode.create("ukf")) {
            UdpTwoNodesIT.join(a, b);
            UdpNetwork na = a.register("10.244.1.0/24", "ul0", "192.0.2.1", UdpOptions.withKernel());
            UdpNetwork nb = b.register("10.244.2.0/24", "ul0", "192.0.2.2", UdpOptions.defaults());
            // A still holds B's lease from before B restarted with JFLANNEL_UDP_KERNEL=off
            LeaseAttrs stale = new LeaseAttrs(b.subnets.published().publicIp(), null, "", UdpBackendData.KERNEL_DECAP, null);
            a.apply(LeaseEvent.added(Leases.published("10.244.2.0/24", stale)));
            b.apply(LeaseEvent.added(Leases.published("10.244.1.0/24", a.subnets.published())));
            assertThat(na.kernelPeers()).isEqualTo(1);
            // B's new lease arrives: the same subnet and public IP, no backend data
            a.apply(LeaseEvent.added(Leases.published("10.244.2.0/24", b.subnets.published())));
            assertThat(na.kernelPeers()).as("B left to the packet threads").isZero();
            long encapBefore = na.kernelPackets()[KernelPrograms.COUNT_ENCAP];

            UdpTwoNodesIT.assertTcpStreamArrivesIntact(a, b, "10.244.2.1", 8 << 20);
            UdpTwoNodesIT.assertTcpStreamArrivesIntact(b, a, "10.244.1.1", 8 << 20);
            assertThat(na.kernelPackets()[KernelPrograms.COUNT_ENCAP]).as("nothing more from A's kernel").isEqualTo(encapBefore);
            assertThat(na.counters().packetsToPeers()).isGreaterThan(5_000);
            assertThat(nb.counters().drops(Drop.MALFORMED)).isZero();
            na.close();
            nb.close();
        }
    }

    @Test
    void aNodeWithoutTheKernelPathExchangesUpstreamDatagramsWithOne() throws Exception {
        try (UdpNode a = UdpNode.create("ukc"); UdpNode b = UdpNode.create("ukd")) {
            UdpTwoNodesIT.join(a, b);
            UdpNetwork na = a.register("10.244.1.0/24", "ul0", "192.0.2.1", UdpOptions.withKernel());
            UdpNetwork nb = b.register("10.244.2.0/24", "ul0", "192.0.2.2", UdpOptions.defaults());
            assertThat(b.subnets.published().backendData()).as("no kernel datapath, no backend data (upstream's)").isNull();
            a.apply(LeaseEvent.added(Leases.published("10.244.2.0/24", b.subnets.published())));
            b.apply(LeaseEvent.added(Leases.published("10.244.1.0/24", a.subnets.published())));
            assertThat(na.kernelPeers()).as("B does not decapsulate in its kernel").isZero();

            UdpTwoNodesIT.assertTcpStreamArrivesIntact(a, b, "10.244.2.1", 16 << 20);
            UdpTwoNodesIT.assertTcpStreamArrivesIntact(b, a, "10.244.1.1", 16 << 20);
            assertThat(na.kernelPackets()[KernelPrograms.COUNT_ENCAP]).as("A sent to B through its packet threads").isZero();
            assertThat(na.counters().packetsToPeers()).isGreaterThan(10_000);
            // B's GSO sends cross the veth as trains of datagrams: the program leaves those to A's socket
            assertThat(na.counters().groTrains()).as("trains taken by A's packet threads").isPositive();
            assertThat(nb.counters().drops(Drop.MALFORMED) + na.counters().drops(Drop.MALFORMED)).isZero();
            na.close();
            nb.close();
        }
    }

    /**
     * Until A's kernel proved B and B's proved A (each answered the other's probe from its kernel), read from the kernels'
     * proof maps: from then on TCP and UDP go from kernel to kernel.
     */
    static void awaitProofs(UdpNetwork na, UdpNetwork nb) throws Exception {
        java.net.Inet4Address ipA = org.jflannel.core.Ip4Net.toInet(org.jflannel.core.Ip4Net.parseAddress("192.0.2.1"));
        java.net.Inet4Address ipB = org.jflannel.core.Ip4Net.toInet(org.jflannel.core.Ip4Net.parseAddress("192.0.2.2"));
        Wait.until("each kernel proved to the other", org.jflannel.testsupport.cluster.Bounds.scaled(Duration.ofSeconds(20)),
                () -> na.kernelPeerProven(ipB) && nb.kernelPeerProven(ipA));
    }

    /** Both nodes' kernel counters and packet-thread counters, read together. */
    private record Ledger(long[] ka, long[] kb, long fromPeersA, long fromPeersB, long toPeersA, long toPeersB) {
        static Ledger of(UdpNetwork na, UdpNetwork nb) {
            return new Ledger(na.kernelPackets(), nb.kernelPackets(), na.counters().packetsFromPeers(),
                    nb.counters().packetsFromPeers(), na.counters().packetsToPeers(), nb.counters().packetsToPeers());
        }

        @Override
        public String toString() {
            return "A kernel " + java.util.Arrays.toString(ka) + " B kernel " + java.util.Arrays.toString(kb) + " A threads from/to "
                    + fromPeersA + "/" + toPeersA + " B threads from/to " + fromPeersB + "/" + toPeersB;
        }
    }

    /** A datagram from {@code from}'s 10.244.2.1 to {@code to}'s 10.244.1.1:7777 (its UDP checksum left partial) arrives as sent. */
    private static void assertUdpDatagramArrives(UdpNode from, UdpNode to) throws Exception {
        byte[] hello = "hello through a partial checksum".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        byte[] got;
        try (DatagramSocket r = to.inside(() -> new DatagramSocket(new InetSocketAddress("10.244.1.1", 7777)))) {
            r.setSoTimeout(10_000);
            from.inside(() -> {
                try (DatagramSocket s = new DatagramSocket(new InetSocketAddress("10.244.2.1", 0))) {
                    s.send(new DatagramPacket(hello, hello.length, new InetSocketAddress("10.244.1.1", 7777)));
                }
                return null;
            });
            DatagramPacket d = new DatagramPacket(new byte[100], 100);
            r.receive(d);
            got = java.util.Arrays.copyOf(d.getData(), d.getLength());
        }
        assertThat(got).isEqualTo(hello);
    }
}
