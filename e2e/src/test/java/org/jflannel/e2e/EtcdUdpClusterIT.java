package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testsupport.cluster.Bounds;
import org.jflannel.testsupport.cluster.ClusterNames;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.Datagrams;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The 3-node etcd cluster on the UDP backend: real flanneld processes move every pod-to-pod packet
 * through flannel0 and their UDP sockets. One cluster for the class; the test that takes a lease
 * away runs last.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EtcdUdpClusterIT {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend("udp"));
    private final NetnsCluster cluster;

    EtcdUdpClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void everyPodReachesEveryOtherPod() throws Exception {
        assertThat(cluster.pods()).hasSize(6);
        Overlay.assertEveryPodReachesEveryOther(cluster);
        for (ClusterNode n : cluster.nodes()) { // as shipped: the kernel encapsulated, and decapsulated through VXLAN-GPE
            assertThat(n.metric("flanneld_udp_kernel_packets_total{direction=\"to_peers\"}")).as("encapsulated by %s's kernel", n.name())
                    .isPositive();
            assertThat(n.metric("flanneld_udp_kernel_packets_total{direction=\"from_peers\"}"))
                    .as("decapsulated by %s's kernel", n.name()).isPositive();
            assertThat(n.logSinceStart()).as("%s log", n.name()).contains("udp kernel decapsulation through a vxlan-gpe device")
                    .doesNotContain("udp vxlan-gpe path left");
            assertThat(cluster.etcdGet(NetnsCluster.leaseKey(n.lease()))).as("%s takes kernel-encapsulated datagrams", n.name())
                    .contains("KernelDecap");
        }
    }

    @Test
    @Order(2)
    void eachNodeHasFlannel0WithTheUdpMtuAndTheNetworkRoute() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            Overlay.assertUdpDevice(n, cluster.options().network());
        }
    }

    /**
     * Issue 38's hostile underlay on the udp backend's packet threads: inner packets to node1's pod from an address
     * on the segment that no lease holds (unknown peer), from node2's address with an inner source outside node2's
     * subnet (source mismatch), and malformed payloads from node2's address: each counted by its reason in node1's
     * /metrics (its socket's overflows, if any, excepted), none delivered to the pod, one log line per reason at
     * most, and the pods keep talking. (The kernel datapath takes only checksum-0 datagrams; these carry checksums.)
     */
    @Test
    @Order(3)
    void strangersSpoofedAndMalformedDatagramsAreDroppedCountedByReasonAndNeverDelivered() throws Exception {
        ClusterNode n1 = cluster.node(1);
        ClusterNode n2 = cluster.node(2);
        Pod a = cluster.pods().stream().filter(p -> p.node() == 1).findFirst().orElseThrow();
        Pod b = cluster.pods().stream().filter(p -> p.node() == 2).findFirst().orElseThrow();
        InetSocketAddress to = new InetSocketAddress(n1.publicIp(), 8285);
        InetAddress podA = InetAddress.getByName(a.ip());
        List<byte[]> fromStranger = new ArrayList<>();
        List<byte[]> mismatched = new ArrayList<>();
        List<byte[]> malformed = new ArrayList<>();
        SplittableRandom random = new SplittableRandom(38);
        for (int i = 0; i < 200; i++) {
            fromStranger.add(udpPacket(InetAddress.getByName(b.ip()), podA, i));
            mismatched.add(udpPacket(InetAddress.getByName("10.99.0.7"), podA, i));
        }
        for (int i = 0; i < 300; i++) {
            byte[] m = new byte[1 + random.nextInt(19)]; // shorter than an IPv4 header
            random.nextBytes(m);
            m[0] = (byte) (0x45);
            malformed.add(m);
        }
        String[] reasons = {"unknown_peer", "source_mismatch", "malformed"};
        double[] before = udpDrops(n1, reasons);
        long rcvbufBefore = n1.udpSnmp().rcvbufErrors();
        long linesBefore = n1.logSinceStart().lines().count();
        String stranger = "192.0.2.250";
        Cmd.run(Duration.ofSeconds(10), List.of("ip", "-n", n2.namespace(), "addr", "add", stranger + "/24", "dev",
                ClusterNames.NODE_IFACE, "nodad")).orThrow();
        Path pcap = n1.dir().resolve("hostile-to-pod.pcap");
        Process capture = new ProcessBuilder("ip", "netns", "exec", a.namespace(), "timeout", "60", "tcpdump", "-i", "eth0", "-n", "-U",
                "--immediate-mode", "-w", pcap.toString(), "udp port " + HOSTILE_PORT).redirectErrorStream(true)
                .redirectOutput(pcap.resolveSibling("hostile-to-pod.log").toFile()).start();
        try (NetNs ns = NetNs.open(n2.namespace())) {
            Wait.until("tcpdump listening in " + a.namespace(), Duration.ofSeconds(20), () ->
                    Files.exists(pcap.resolveSibling("hostile-to-pod.log"))
                    && Files.readString(pcap.resolveSibling("hostile-to-pod.log")).contains("listening on"));
            ns.call(() -> {
                Datagrams.sendPaced(new InetSocketAddress(stranger, 0), to, fromStranger);
                Datagrams.sendPaced(new InetSocketAddress(n2.publicIp(), 0), to, mismatched);
                Datagrams.sendPaced(new InetSocketAddress(n2.publicIp(), 0), to, malformed);
                return null;
            });
            int sent = fromStranger.size() + mismatched.size() + malformed.size();
            Wait.until("node1 counted the " + sent + " hostile datagrams", Bounds.scaled(Duration.ofSeconds(20)), () ->
                    Datagrams.sum(udpDrops(n1, reasons)) - Datagrams.sum(before) >= sent - (n1.udpSnmp().rcvbufErrors() - rcvbufBefore));
            double[] after = udpDrops(n1, reasons);
            for (int i = 0; i < reasons.length; i++) {
                System.out.println("node1 dropped " + reasons[i] + ": " + (after[i] - before[i]));
            }
            long overflowed = n1.udpSnmp().rcvbufErrors() - rcvbufBefore;
            assertThat(after[0] - before[0]).as("from an address no lease holds").isGreaterThanOrEqualTo(fromStranger.size() - overflowed);
            assertThat(after[1] - before[1]).as("inner source outside node2's subnet").isGreaterThanOrEqualTo(mismatched.size() - overflowed);
            assertThat(after[2] - before[2]).as("not an IPv4 packet").isGreaterThanOrEqualTo(malformed.size() - overflowed);
            assertThat(Cmd.run(Duration.ofSeconds(30), List.of("ip", "netns", "exec", a.namespace(), "ping", "-c", "3", "-i", "0.2",
                    "-W", "2", b.ip())).stdout()).as("node1's pod to node2's after the flood").contains("3 received");
        } finally {
            capture.destroy();
            capture.waitFor(10, TimeUnit.SECONDS);
            Cmd.run(Duration.ofSeconds(10), List.of("ip", "-n", n2.namespace(), "addr", "del", stranger + "/24", "dev", ClusterNames.NODE_IFACE));
        }
        assertThat(Files.size(pcap)).as("bytes tcpdump wrote in node1's pod: its file header only, no packet")
                .isLessThanOrEqualTo(24);
        assertThat(n1.logSinceStart().lines().skip(linesBefore).filter(l -> l.contains("dropped")).count())
                .as("node1's drop lines for 700 hostile datagrams: the first of each reason").isLessThanOrEqualTo(reasons.length);
    }

    private static final int HOSTILE_PORT = 7777;

    /** A whole IPv4/UDP packet from {@code src} to {@code dst}:{@value #HOSTILE_PORT}, header checksum right, 32 bytes of payload. */
    private static byte[] udpPacket(InetAddress src, InetAddress dst, int id) {
        ByteBuffer p = ByteBuffer.allocate(20 + 8 + 32);
        p.put((byte) 0x45).put((byte) 0).putShort((short) p.capacity()).putShort((short) id).putShort((short) 0)
                .put((byte) 64).put((byte) 17).putShort((short) 0).put(src.getAddress()).put(dst.getAddress());
        int sum = 0;
        for (int i = 0; i < 20; i += 2) {
            sum += p.getShort(i) & 0xffff;
        }
        sum = (sum & 0xffff) + (sum >>> 16);
        sum = (sum & 0xffff) + (sum >>> 16);
        p.putShort(10, (short) ~sum);
        p.putShort((short) 40000).putShort((short) HOSTILE_PORT).putShort((short) 40).putShort((short) 0); // no UDP checksum
        p.put("jflannel hostile underlay, #38..".getBytes(StandardCharsets.US_ASCII));
        return p.array();
    }

    private static double[] udpDrops(ClusterNode n, String[] reasons) throws Exception {
        double[] out = new double[reasons.length];
        for (int i = 0; i < reasons.length; i++) {
            out[i] = Math.max(0, n.metric("flanneld_udp_dropped_packets_total{reason=\"" + reasons[i] + "\"}"));
        }
        return out;
    }



    @Test
    @Order(4)
    void leaseDeletedInEtcdLeavesThePeerTablesOfTheOtherNodes() throws Exception {
        NodeLease lease = cluster.node(3).lease();
        assertThat(cluster.deleteLease(lease)).as("keys deleted").isEqualTo(1);

        for (ClusterNode other : List.of(cluster.node(1), cluster.node(2))) {
            Wait.until("lease " + lease.subnet() + " gone from " + other.name() + "'s peers", Duration.ofSeconds(10),
                    () -> other.leasesApplied() == 1);
        }
    }
}
