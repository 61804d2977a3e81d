package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jflannel.backend.wireguard.crypto.X25519;
import org.jflannel.backend.wireguard.protocol.Timings;
import org.jflannel.core.LeaseEvent;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.WireguardDeviceState;
import org.jflannel.linuxnet.netlink.WireguardGenl;
import org.jflannel.linuxnet.netlink.WireguardNetlink;
import org.junit.jupiter.api.Test;

/**
 * Kernel mode against a real kernel WireGuard: runs only inside the kernel VM ({@code tools/kernel-vm},
 * Debian's kernel, which has the module), started by {@link KernelModeVmIT}; its name matches neither
 * test tier's pattern, so the host never runs it (the host's kernel has no WireGuard). What it shows:
 * upstream's device made and configured by our rtnetlink and generic netlink requests, read back by
 * Debian's {@code wg} and {@code ip}; a kernel-mode node and a node running our userspace WireGuard
 * reach each other (both sides' first packets at once, the initiations crossing, ours with the higher key;
 * the kernel initiating alone; a CRC-checked TCP stream both ways); the kernel's peer stats read through our
 * {@code WG_CMD_GET_DEVICE} dump agree with {@code wg show dump}; a removed lease
 * takes the kernel's peer away and its traffic is dropped; the device is kept on close (ours) and carries
 * traffic with the network closed, and a start under another backend deletes it. Dual stack in separate mode with a PSK: the
 * IPv6 device's IPv6 endpoint (sockaddr_in6, written and read back) and allowed IPs, ping6 between two kernel-mode nodes.
 */
class KernelModeInVm {
    private static final String CONF = "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"wireguard\"}}";
    private static final String PSK = "p5sQhnT4eSDH3XpEAvG9DqJdnwKqHkUrb5ymOIoMEe8=";

    @Test
    void aKernelNodeAndAUserspaceNodeReachEachOther() throws Exception {
        Path tmp = Files.createTempDirectory("kvm");
        keysOrdered(tmp.resolve("a"), tmp.resolve("b"));
        try (WgNode a = WgNode.create("kva"); WgNode b = WgNode.create("kvb")) {
            WgNode.join(a, b, "10.244.1.1/24", "10.244.2.1/24");
            WireguardNetwork na = a.register(CONF, "10.244.1.0/24", "ul0", "192.0.2.1", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("a").toString(), "JFLANNEL_WG_DATAPLANE", "kernel"), Timings.standard());
            WireguardNetwork nb = b.register(CONF, "10.244.2.0/24", "ul0", "192.0.2.2", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("b").toString(), "JFLANNEL_WG_DATAPLANE", "userspace"), Timings.standard());
            assertThat(na.kernelMode()).isTrue();
            assertThat(nb.kernelMode()).isFalse();
            assertThat(a.ip("-d", "link", "show", "flannel-wg")).contains("mtu 1420").contains("wireguard");
            assertThat(a.ip("-4", "-o", "addr", "show", "dev", "flannel-wg")).contains("10.244.1.0/32");
            assertThat(a.ip("route", "show", "10.244.0.0/16")).contains("dev flannel-wg");

            na.apply(List.of(LeaseEvent.added(WireguardGoInteropIT.lease("10.244.2.0/24", "192.0.2.2", nb.publicKey()))));
            nb.apply(List.of(LeaseEvent.added(WireguardGoInteropIT.lease("10.244.1.0/24", "192.0.2.1", na.publicKey()))));
            String keyA = Base64.getEncoder().encodeToString(na.publicKey());
            String keyB = Base64.getEncoder().encodeToString(nb.publicKey());
            List<String> dump = a.exec("wg", "show", "flannel-wg", "dump").strip().lines().toList();
            System.out.println("wg show flannel-wg dump (keys elided):\n" + String.join("\n", dump).replaceAll("[A-Za-z0-9+/]{43}=", "<key>"));
            assertThat(dump.get(0).split("\t")).as("device: private, public, port, fwmark")
                    .containsExactly(Files.readString(tmp.resolve("a")).strip(), keyA, "51820", "off");
            assertThat(dump).hasSize(2);
            String[] peer = dump.get(1).split("\t");
            assertThat(peer[0]).isEqualTo(keyB);
            assertThat(peer[1]).as("psk").isEqualTo("(none)");
            assertThat(peer[2]).as("endpoint").isEqualTo("192.0.2.2:51820");
            assertThat(peer[3]).as("allowed ips").isEqualTo("10.244.2.0/24");
            assertThat(peer[7]).as("keepalive").isEqualTo("off");
            assertThat(na.peers()).isEqualTo(1);

            // both sides' first packets at once, ours with the higher key: the kernel answers ours and drops its
            // own, ours answers the kernel's and keeps its own, which the kernel's answer completes (without
            // keeping it, both initiations die and the first packets wait 5 s for a retry)
            assertThat(Arrays.compareUnsigned(nb.publicKey(), na.publicKey())).as("ours has the higher key").isPositive();
            CompletableFuture<String> ab = CompletableFuture.supplyAsync(() -> ping(a, "10.244.1.1", "10.244.2.1"));
            CompletableFuture<String> ba = CompletableFuture.supplyAsync(() -> ping(b, "10.244.2.1", "10.244.1.1"));
            assertThat(received(ab.get())).as("kernel -> userspace, initiations crossing").isPositive();
            assertThat(received(ba.get())).as("userspace -> kernel, initiations crossing").isPositive();
            WgNode.tcpTransferCrc(a, b, "10.244.2.1", 4 << 20);
            WgNode.tcpTransferCrc(b, a, "10.244.1.1", 4 << 20);
            assertThat(a.exec("wg", "show", "flannel-wg", "latest-handshakes")).as("a handshake with b").doesNotContain("\t0");
            assertThat(nb.counters().handshakesCompleted.sum()).isPositive();
            kernelStatsAgreeWithWg(a, na, nb, keyB);

            na.apply(List.of(LeaseEvent.removed(WireguardGoInteropIT.lease("10.244.2.0/24", "192.0.2.2", nb.publicKey()))));
            assertThat(a.exec("wg", "show", "flannel-wg", "peers").strip()).as("b's peer gone from the kernel").isEmpty();
            assertThat(na.peers()).isZero();
            assertThat(received(ping(b, "10.244.2.1", "10.244.1.1"))).as("b's traffic dropped by a's kernel").isZero();

            // the peer back: the kernel has no session with it now and initiates; ours answers
            na.apply(List.of(LeaseEvent.added(WireguardGoInteropIT.lease("10.244.2.0/24", "192.0.2.2", nb.publicKey()))));
            assertThat(received(ping(a, "10.244.1.1", "10.244.2.1"))).as("kernel initiates, ours answers").isPositive();

            String index = a.ip("-o", "link", "show", "flannel-wg").split(":")[0];
            na.close();
            // ours: the kernel keeps carrying the node's traffic while the daemon is down, for the next start to adopt
            assertThat(a.ip("-o", "link", "show", "flannel-wg")).as("kept on close, the same device").startsWith(index + ":");
            assertThat(a.exec("wg", "show", "flannel-wg", "peers").strip()).as("its peer kept").isEqualTo(keyB);
            assertThat(received(ping(b, "10.244.2.1", "10.244.1.1"))).as("b reaches a's kernel with a's daemon gone").isPositive();
            // a start under another backend deletes it (flanneld's Daemon does this for every Backend.Type but wireguard)
            a.inside(() -> {
                WireguardBackend.deleteLeftoverDevices("Backend.Type=vxlan");
                return null;
            });
            assertThat(a.execAnyExit("ip", "link", "show", "flannel-wg")).as("deleted for another backend").doesNotContain("flannel-wg:");
        }
    }

    /**
     * A peer table too large for one dump message, read back whole: 400 peers with one allowed IP each and one
     * with 3,200 (each peer about 170 bytes in the dump, the big one about 90 KB: the kernel continues the peer
     * list over several messages and splits the big peer, repeating its key), as {@code wg show} lists them.
     */
    @Test
    void aPeerTableLargerThanOneDumpMessageComesBackWhole() throws Exception {
        Path tmp = Files.createTempDirectory("kvmdump");
        try (WgNode a = WgNode.create("kvda"); WgNode b = WgNode.create("kvdb")) {
            WgNode.join(a, b, "10.244.1.1/24", "10.244.2.1/24");
            WireguardNetwork na = a.register(CONF, "10.244.1.0/24", "ul0", "192.0.2.1", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("a").toString(), "JFLANNEL_WG_DATAPLANE", "kernel"), Timings.standard());
            SecureRandom random = new SecureRandom();
            java.util.Map<String, List<IpPrefix>> want = new java.util.LinkedHashMap<>();
            List<WireguardGenl.PeerSpec> small = new java.util.ArrayList<>();
            for (int i = 0; i < 400; i++) {
                byte[] key = X25519.publicKey(X25519.generatePrivate(random));
                List<IpPrefix> ips = List.of(IpPrefix.parse("10.250." + (i / 250) + "." + (i % 250) + "/32"));
                small.add(new WireguardGenl.PeerSpec(key, null, java.net.InetAddress.getByName("192.0.2." + (2 + i % 200)), 51820, 0,
                        ips, WireguardGenl.WGPEER_F_REPLACE_ALLOWEDIPS));
                want.put(Base64.getEncoder().encodeToString(key), ips);
            }
            byte[] bigKey = X25519.publicKey(X25519.generatePrivate(random));
            List<IpPrefix> bigIps = new java.util.ArrayList<>();
            for (int i = 0; i < 3200; i++) {
                bigIps.add(IpPrefix.parse("10.251." + (i / 250) + "." + (i % 250) + "/32"));
            }
            want.put(Base64.getEncoder().encodeToString(bigKey), bigIps);
            WireguardDeviceState state = a.inside(() -> {
                try (WireguardNetlink genl = WireguardNetlink.open()) {
                    genl.setDevice("flannel-wg", null, 0, 0, small);
                    for (int from = 0; from < bigIps.size(); from += 400) { // appended 400 at a time: one request each
                        genl.setDevice("flannel-wg", null, 0, 0, List.of(new WireguardGenl.PeerSpec(bigKey, null, null, 0, 0,
                                bigIps.subList(from, from + 400), 0)));
                    }
                    return genl.getDevice("flannel-wg");
                }
            });
            assertThat(state.ifname()).isEqualTo("flannel-wg");
            assertThat(state.listenPort()).isEqualTo(51820);
            assertThat(state.publicKey()).isEqualTo(Base64.getEncoder().encodeToString(na.publicKey()));
            assertThat(state.peers()).hasSize(401);
            java.util.Map<String, List<IpPrefix>> got = new java.util.LinkedHashMap<>();
            for (var p : state.peers()) {
                assertThat(got.put(p.publicKey(), p.allowedIps())).as("peer %s once", p.publicKey()).isNull();
            }
            assertThat(got.keySet()).containsExactlyInAnyOrderElementsOf(want.keySet());
            want.forEach((key, ips) -> assertThat(got.get(key)).as("allowed IPs of %s", key).containsExactlyInAnyOrderElementsOf(ips));
            String wgPeers = a.exec("wg", "show", "flannel-wg", "peers");
            assertThat(wgPeers.strip().lines()).hasSize(401);
            assertThat(a.exec("wg", "show", "flannel-wg", "allowed-ips").split("\\s+")).as("wg show's allowed IPs, keys included")
                    .hasSize(401 + 400 + 3200);
            assertThat(na.peerStats("flannel-wg")).hasSize(401);
            na.close();
        }
    }

    @Test
    void dualStackSeparateModeWithPskBetweenTwoKernelNodes() throws Exception {
        Path tmp = Files.createTempDirectory("kvm6");
        String conf = "{\"EnableIPv6\":true,\"Network\":\"10.244.0.0/16\",\"IPv6Network\":\"fd00:10:244::/56\","
                + "\"Backend\":{\"Type\":\"wireguard\",\"PSK\":\"" + PSK + "\",\"PersistentKeepaliveInterval\":25}}";
        try (WgNode a = WgNode.create("kv6a"); WgNode b = WgNode.create("kv6b")) {
            WgNode.joinDualStack(a, b, "192.0.2", new String[] {"10.244.1.1/24", "fd00:10:244:1::1/64"},
                    new String[] {"10.244.2.1/24", "fd00:10:244:2::1/64"});
            WireguardNetwork na = a.register(conf, "10.244.1.0/24", "fd00:10:244:1::/64", "ul0", "192.0.2.1", "2001:db8::1", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("a").toString(), "JFLANNEL_WG_DATAPLANE", "kernel"));
            WireguardNetwork nb = b.register(conf, "10.244.2.0/24", "fd00:10:244:2::/64", "ul0", "192.0.2.2", "2001:db8::2", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("b").toString()));
            assertThat(na.kernelMode()).isTrue();
            assertThat(nb.kernelMode()).as("auto picks the kernel where it has WireGuard").isTrue();
            assertThat(na.deviceNames()).containsExactly("flannel-wg", "flannel-wg-v6");
            na.apply(List.of(LeaseEvent.added(WireguardIpv6IT.lease("10.244.2.0/24", "fd00:10:244:2::/64", "192.0.2.2", "2001:db8::2",
                    nb.publicKey(), 51821))));
            nb.apply(List.of(LeaseEvent.added(WireguardIpv6IT.lease("10.244.1.0/24", "fd00:10:244:1::/64", "192.0.2.1", "2001:db8::1",
                    na.publicKey(), 51821))));
            List<String> v6 = a.exec("wg", "show", "flannel-wg-v6", "dump").strip().lines().toList();
            assertThat(v6.get(0).split("\t")[2]).as("ListenPortV6").isEqualTo("51821");
            String[] peer = v6.get(1).split("\t");
            assertThat(peer[1]).as("psk").isEqualTo(PSK);
            assertThat(peer[2]).as("IPv6 endpoint").isEqualTo("[2001:db8::2]:51821");
            assertThat(peer[3]).as("allowed ips").isEqualTo("fd00:10:244:2::/64");
            assertThat(peer[7]).as("keepalive").isEqualTo("25");
            assertThat(a.ip("-6", "route", "show", "fd00:10:244::/56")).contains("dev flannel-wg-v6");
            assertThat(received(ping(a, "fd00:10:244:1::1", "fd00:10:244:2::1"))).as("ping6 over flannel-wg-v6").isPositive();
            assertThat(received(ping(b, "10.244.2.1", "10.244.1.1"))).as("IPv4 alongside").isPositive();
            String[] wg6 = a.exec("wg", "show", "flannel-wg-v6", "dump").strip().lines().toList().get(1).split("\t");
            assertThat(na.peerStats("flannel-wg-v6")).singleElement().satisfies(s -> {
                assertThat(s.publicKey()).isEqualTo(wg6[0]);
                assertThat(s.endpoint()).as("sockaddr_in6 read back").hasToString(wg6[2]);
                assertThat(s.rxBytes()).as("the ping6 replies").isPositive();
            });
            nb.close();
            na.close();
            assertThat(a.ip("-o", "link", "show", "flannel-wg-v6")).as("kept on close (ours)").contains("flannel-wg-v6:");
            a.inside(() -> {
                WireguardBackend.deleteLeftoverDevices("Backend.Type=host-gw");
                return null;
            });
            assertThat(a.execAnyExit("ip", "link", "show", "flannel-wg")).as("deleted for another backend").doesNotContain("flannel-wg:");
            assertThat(a.execAnyExit("ip", "link", "show", "flannel-wg-v6")).as("deleted for another backend").doesNotContain("flannel-wg-v6:");
        }
    }

    /**
     * After the TCP streams: the kernel device's stats through our WG_CMD_GET_DEVICE dump, read between two of
     * {@code wg show dump}'s reads of the same peer, lie between them (keepalives may move the counters meanwhile):
     * key, endpoint, handshake second, bytes each way. And what the userspace node received from the kernel (data
     * messages) is at most what the kernel sent it (which also counts handshake messages).
     */
    private static void kernelStatsAgreeWithWg(WgNode a, WireguardNetwork na, WireguardNetwork nb, String keyB) throws Exception {
        long userspaceReceived = nb.peerStats("flannel-wg").get(0).rxBytes();
        String[] before = wgPeer(a);
        List<PeerStats> stats = na.peerStats("flannel-wg");
        String[] after = wgPeer(a);
        System.out.println("GET_DEVICE " + stats.get(0).endpoint() + " rx=" + stats.get(0).rxBytes() + " tx=" + stats.get(0).txBytes()
                + " handshake=" + stats.get(0).lastHandshake().orElseThrow() + "; wg dump before rx=" + before[5] + " tx=" + before[6]
                + " after rx=" + after[5] + " tx=" + after[6]);
        assertThat(stats).singleElement().satisfies(s -> {
            assertThat(s.publicKey()).isEqualTo(keyB).isEqualTo(before[0]);
            assertThat(s.endpoint()).hasToString(before[2]);
            assertThat(s.lastHandshakeEpochNanos() / 1_000_000_000L).as("latest handshake (s)")
                    .isBetween(Long.parseLong(before[4]), Long.parseLong(after[4]));
            assertThat(s.rxBytes()).as("transfer rx").isBetween(Long.parseLong(before[5]), Long.parseLong(after[5]));
            assertThat(s.txBytes()).as("transfer tx").isBetween(Long.parseLong(before[6]), Long.parseLong(after[6]));
            assertThat(s.rxBytes()).as("the 4 MiB stream from b").isGreaterThan(4 << 20);
            assertThat(s.txBytes()).as("the 4 MiB stream to b").isGreaterThan(4 << 20);
            assertThat(s.txBytes()).as("what the kernel sent b, handshakes included").isGreaterThanOrEqualTo(userspaceReceived);
        });
    }

    /** The peer's line of {@code wg show flannel-wg dump}: key, psk, endpoint, allowed ips, handshake, rx, tx, keepalive. */
    private static String[] wgPeer(WgNode a) throws Exception {
        return a.exec("wg", "show", "flannel-wg", "dump").strip().lines().toList().get(1).split("\t");
    }

    /** Key files for a and b, b's public key the higher (as {@code wg genkey} writes them: base64). */
    private static void keysOrdered(Path a, Path b) throws Exception {
        SecureRandom random = new SecureRandom();
        byte[] ka;
        byte[] kb;
        do {
            ka = X25519.generatePrivate(random);
            kb = X25519.generatePrivate(random);
        } while (Arrays.compareUnsigned(X25519.publicKey(kb), X25519.publicKey(ka)) <= 0);
        Files.writeString(a, Base64.getEncoder().encodeToString(ka) + "\n");
        Files.writeString(b, Base64.getEncoder().encodeToString(kb) + "\n");
    }

    /** How many echoes came back, from ping's summary line (-1 when it has none). */
    private static int received(String ping) {
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("(\\d+) received").matcher(ping);
        return m.find() ? Integer.parseInt(m.group(1)) : -1;
    }

    /** Up to 3 echoes, 2 s each: the first may wait for the handshake. */
    private static String ping(WgNode n, String from, String to) {
        try {
            return n.execAnyExit("ping", "-n", "-c", "3", "-i", "0.5", "-W", "2", "-I", from, to);
        } catch (Exception e) {
            return e.toString();
        }
    }
}
