package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * WG_CMD_GET_DEVICE: the request against golden bytes derived by hand from include/uapi/linux/wireguard.h
 * ("May only be called via NLM_F_REQUEST | NLM_F_DUMP", the device named by WGDEVICE_A_IFNAME), and the
 * decoder on replies built by hand as drivers/net/wireguard/netlink.c writes them: device attributes in the
 * first message, peers in a WGDEVICE_A_PEERS nest of each message, a peer split across two messages, u64
 * values after type-0 alignment pads.
 */
class WireguardDumpTest {
    private static final HexFormat HEX = HexFormat.of();
    private static final int NESTED = WireguardGenl.NLA_F_NESTED;

    @Test
    void theRequestIsADumpNamingTheDevice() {
        String expected = ""
                + "24000000" + "1f00" + "0103" + "07000000" + "00000000"   // nlmsghdr: 36 bytes, the family id, REQUEST | DUMP (ROOT|MATCH), seq
                + "00010000"                                               // genlmsghdr: WG_CMD_GET_DEVICE (0), WG_GENL_VERSION 1
                + "0f000200" + "666c616e6e656c2d7767" + "00" + "00";       // WGDEVICE_A_IFNAME "flannel-wg\0", 1 pad
        assertThat(HEX.formatHex(WireguardDump.request(0x1f, 7, "flannel-wg"))).isEqualTo(expected);
    }

    @Test
    void oneMessageWithTheDeviceAndOnePeer() {
        String payload = ""
                + "00010000"                                               // WG_CMD_GET_DEVICE, version 1
                + "06000600" + "6cca" + "0000"                             // WGDEVICE_A_LISTEN_PORT 51820
                + "08000700" + "00000000"                                  // WGDEVICE_A_FWMARK 0
                + "08000100" + "05000000"                                  // WGDEVICE_A_IFINDEX 5
                + "0f000200" + "666c616e6e656c2d7767" + "00" + "00"        // WGDEVICE_A_IFNAME
                + "24000300" + "11".repeat(32)                             // WGDEVICE_A_PRIVATE_KEY (skipped)
                + "24000400" + "12".repeat(32)                             // WGDEVICE_A_PUBLIC_KEY
                + "c4000880"                                               // WGDEVICE_A_PEERS | NESTED, 196 bytes
                + "c0000080"                                               //   peer 0 | NESTED, 192 bytes
                + "24000100" + "22".repeat(32)                             //     WGPEER_A_PUBLIC_KEY
                + "24000200" + "00".repeat(32)                             //     WGPEER_A_PRESHARED_KEY (none: zeros)
                + "14000600" + "00d2496b00000000" + "15cd5b0700000000"     //     WGPEER_A_LAST_HANDSHAKE_TIME 1800000000 s 123456789 ns
                + "06000500" + "1900" + "0000"                             //     WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL 25
                + "04000000"                                               //     WGPEER_A_UNSPEC: a pad aligning the u64 after it
                + "0c000800" + "cb04fb711f010000"                          //     WGPEER_A_TX_BYTES 1234567890123
                + "0c000700" + "2a00000000000000"                          //     WGPEER_A_RX_BYTES 42
                + "08000a00" + "01000000"                                  //     WGPEER_A_PROTOCOL_VERSION 1
                + "14000400" + "0200" + "ca6c" + "c0000202" + "00".repeat(8) //   WGPEER_A_ENDPOINT sockaddr_in 192.0.2.2:51820
                + "20000980"                                               //     WGPEER_A_ALLOWEDIPS | NESTED, 32 bytes
                + "1c000080"                                               //       allowed ip 0, 28 bytes
                + "05000300" + "18" + "000000"                             //         WGALLOWEDIP_A_CIDR_MASK 24
                + "06000100" + "0200" + "0000"                             //         WGALLOWEDIP_A_FAMILY AF_INET
                + "08000200" + "0af40200";                                 //         WGALLOWEDIP_A_IPADDR 10.244.2.0
        WireguardDeviceState d = WireguardDump.decode(List.of(ByteBuffer.wrap(HEX.parseHex(payload))));
        assertThat(d.ifname()).isEqualTo("flannel-wg");
        assertThat(d.ifindex()).isEqualTo(5);
        assertThat(d.listenPort()).isEqualTo(51820);
        assertThat(d.publicKey()).isEqualTo(key(0x12));
        assertThat(d.peers()).containsExactly(new WireguardPeerState(key(0x22), new InetSocketAddress(ip("192.0.2.2"), 51820),
                1_800_000_000_123_456_789L, 42, 1_234_567_890_123L, 25, List.of(prefix("10.244.2.0", 24))));
    }

    @Test
    void aPeerSplitAcrossTwoMessagesIsMergedByKey() {
        ByteBuffer first = message(w -> {
            w.attrU16(WireguardGenl.WGDEVICE_A_LISTEN_PORT, 51820);
            w.attrString(WireguardGenl.WGDEVICE_A_IFNAME, "flannel-wg");
            int peers = w.nest(WireguardGenl.WGDEVICE_A_PEERS | NESTED);
            peer(w, 0xa1, true, List.of(v4("10.244.1.0", 24)));
            peer(w, 0xb2, true, List.of(v4("10.244.2.0", 24), v4("10.244.3.0", 24)));
            w.end(peers);
        });
        ByteBuffer second = message(w -> { // as the kernel continues: no device attributes, b's key again with the rest
            int peers = w.nest(WireguardGenl.WGDEVICE_A_PEERS | NESTED);
            peer(w, 0xb2, false, List.of(v4("10.244.4.0", 24)));
            peer(w, 0xc3, true, List.of());
            w.end(peers);
        });
        WireguardDeviceState d = WireguardDump.decode(List.of(first, second));
        assertThat(d.ifname()).isEqualTo("flannel-wg");
        assertThat(d.peers()).extracting(WireguardPeerState::publicKey).containsExactly(key(0xa1), key(0xb2), key(0xc3));
        WireguardPeerState b = d.peers().get(1);
        assertThat(b.allowedIps()).containsExactly(prefix("10.244.2.0", 24), prefix("10.244.3.0", 24), prefix("10.244.4.0", 24));
        assertThat(b.rxBytes()).as("the first part's counters kept").isEqualTo(0xb2 * 1000L);
        assertThat(b.txBytes()).isEqualTo(0xb2 * 2000L);
        assertThat(b.endpoint()).isEqualTo(new InetSocketAddress(ip("192.0.2.178"), 51820));
        assertThat(d.peers().get(2).allowedIps()).isEmpty();
    }

    @Test
    void anIpv6EndpointAndAllowedIp() {
        ByteBuffer m = message(w -> {
            int peers = w.nest(WireguardGenl.WGDEVICE_A_PEERS | NESTED);
            int p = w.nest(NESTED);
            w.attr(WireguardGenl.WGPEER_A_PUBLIC_KEY, filled(0x66));
            w.attr(WireguardGenl.WGPEER_A_ENDPOINT, HEX.parseHex("0a00" + "ca6d" + "00000000"      // AF_INET6, port 51821, flow 0
                    + "20010db8000000000000000000000002" + "00000000"));                       // 2001:db8::2, scope 0
            allowedIps(w, List.of(new Ip(HEX.parseHex("fd000000000000070000000000000000"), 64)));
            w.end(p);
            w.end(peers);
        });
        WireguardPeerState peer = WireguardDump.decode(List.of(m)).peers().get(0);
        assertThat(peer.endpoint()).isEqualTo(new InetSocketAddress(ip("2001:db8::2"), 51821));
        assertThat(peer.endpoint().getAddress().getHostAddress()).as("no scope").isEqualTo("2001:db8:0:0:0:0:0:2");
        assertThat(peer.allowedIps()).containsExactly(prefix("fd00:0:0:7::", 64));
        assertThat(peer.lastHandshakeEpochNanos()).as("no handshake attribute: never").isEqualTo(WireguardPeerState.NEVER);
    }

    @Test
    void unknownAttributesAreSkipped() {
        ByteBuffer m = message(w -> {
            w.attrU32(99, 0xdeadbeef);                       // a device attribute of a newer kernel
            w.attrString(WireguardGenl.WGDEVICE_A_IFNAME, "wg0");
            int peers = w.nest(WireguardGenl.WGDEVICE_A_PEERS | NESTED);
            int p = w.nest(NESTED);
            w.attr(42, new byte[] {1, 2, 3});                // a peer attribute of a newer kernel, unaligned
            w.attr(WireguardGenl.WGPEER_A_PUBLIC_KEY, filled(0x77));
            w.attr(WireguardGenl.WGPEER_A_RX_BYTES, le64(7));
            w.end(p);
            w.end(peers);
        });
        WireguardDeviceState d = WireguardDump.decode(List.of(m));
        assertThat(d.ifname()).isEqualTo("wg0");
        assertThat(d.peers()).singleElement().satisfies(p -> {
            assertThat(p.publicKey()).isEqualTo(key(0x77));
            assertThat(p.rxBytes()).isEqualTo(7);
        });
    }

    @Test
    void aTruncatedAttributeIsRefusedNamingIt() {
        ByteBuffer m = message(w -> {
            int peers = w.nest(WireguardGenl.WGDEVICE_A_PEERS | NESTED);
            int p = w.nest(NESTED);
            w.attr(WireguardGenl.WGPEER_A_PUBLIC_KEY, filled(0x88));
            w.u16(12).u16(WireguardGenl.WGPEER_A_RX_BYTES).u32(0); // says 12 bytes; the peer's nest ends after 8
            w.end(p);
            w.end(peers);
        });
        assertThatThrownBy(() -> WireguardDump.decode(List.of(m)))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("malformed WG_CMD_GET_DEVICE reply: message 0 peer 0: WGPEER_A_RX_BYTES of length 12 runs past its end "
                        + "(8 bytes left)");
    }

    @Test
    void aValueOfTheWrongSizeIsRefusedNamingIt() {
        ByteBuffer m = message(w -> {
            int peers = w.nest(WireguardGenl.WGDEVICE_A_PEERS | NESTED);
            int p = w.nest(NESTED);
            w.attr(WireguardGenl.WGPEER_A_PUBLIC_KEY, filled(0x99));
            w.attrU32(WireguardGenl.WGPEER_A_TX_BYTES, 5); // a u64 sent as 4 bytes
            w.end(p);
            w.end(peers);
        });
        assertThatThrownBy(() -> WireguardDump.decode(List.of(m)))
                .hasMessageContaining("message 0 peer 0: WGPEER_A_TX_BYTES of 4 bytes, expected 8");
    }

    @Test
    void aMessageCutShortInsideThePeersNestNamesTheNest() {
        ByteBuffer whole = message(w -> {
            int peers = w.nest(WireguardGenl.WGDEVICE_A_PEERS | NESTED);
            peer(w, 0x10, true, List.of(v4("10.244.1.0", 24)));
            w.end(peers);
        });
        ByteBuffer cut = whole.duplicate().limit(whole.limit() - 20);
        assertThatThrownBy(() -> WireguardDump.decode(List.of(cut))).hasMessageContaining("message 0: WGDEVICE_A_PEERS of length");
    }

    // ---------------------------------------------------------------- helpers

    private interface Body {
        void write(NlWriter w);
    }

    /** One reply's payload: genlmsghdr, then what {@code body} writes. */
    private static ByteBuffer message(Body body) {
        NlWriter w = NlWriter.heap(4096).begin(0x1f, 0x2, 1);
        w.u8(WireguardGenl.WG_CMD_GET_DEVICE).u8(1).u16(0);
        body.write(w);
        byte[] all = w.finishBytes();
        return ByteBuffer.wrap(Arrays.copyOfRange(all, NlWriter.HDRLEN, all.length));
    }

    /** A peer nest keyed {@code fill}; {@code whole}: with its counters and endpoint (a continuation has only the key). */
    private static void peer(NlWriter w, int fill, boolean whole, List<Ip> ips) {
        int p = w.nest(NESTED);
        w.attr(WireguardGenl.WGPEER_A_PUBLIC_KEY, filled(fill));
        if (whole) {
            w.attr(WireguardGenl.WGPEER_A_RX_BYTES, le64(fill * 1000L));
            w.attr(WireguardGenl.WGPEER_A_TX_BYTES, le64(fill * 2000L));
            w.attr(WireguardGenl.WGPEER_A_ENDPOINT, HEX.parseHex("0200" + "ca6c" + "c00002" + String.format("%02x", fill) + "00".repeat(8)));
        }
        allowedIps(w, ips);
        w.end(p);
    }

    private static void allowedIps(NlWriter w, List<Ip> ips) {
        if (ips.isEmpty()) {
            return;
        }
        int all = w.nest(WireguardGenl.WGPEER_A_ALLOWEDIPS | NESTED);
        for (Ip ip : ips) {
            int one = w.nest(NESTED);
            w.attrU16(WireguardGenl.WGALLOWEDIP_A_FAMILY, ip.addr().length == 4 ? WireguardGenl.AF_INET : WireguardGenl.AF_INET6);
            w.attr(WireguardGenl.WGALLOWEDIP_A_IPADDR, ip.addr());
            w.attrU8(WireguardGenl.WGALLOWEDIP_A_CIDR_MASK, ip.bits());
            w.end(one);
        }
        w.end(all);
    }

    /** An allowed IP as the kernel sends it: the address's bytes and the prefix length. */
    private record Ip(byte[] addr, int bits) {
    }

    private static Ip v4(String ip, int bits) {
        return new Ip(ip(ip).getAddress(), bits);
    }

    private static byte[] le64(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(v).array();
    }

    private static byte[] filled(int b) {
        byte[] k = new byte[32];
        Arrays.fill(k, (byte) b);
        return k;
    }

    private static String key(int b) {
        return Base64.getEncoder().encodeToString(filled(b));
    }

    private static InetAddress ip(String s) {
        try {
            return InetAddress.getByName(s);
        } catch (java.net.UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }

    private static IpPrefix prefix(String ip, int bits) {
        return new IpPrefix(ip(ip), bits);
    }
}
