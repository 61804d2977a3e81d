package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * WireGuard generic netlink requests against golden bytes derived by hand from
 * include/uapi/linux/wireguard.h and linux/genetlink.h (this kernel has no WireGuard, so no tool's
 * request could be captured as CodecGoldenTest's were). Each line of the expected hex is one field
 * or attribute, commented; nests carry NLA_F_NESTED as wg(8) (libmnl) writes them.
 */
class WireguardGenlTest {
    private static final HexFormat HEX = HexFormat.of();

    private static byte[] filled(int b) {
        byte[] k = new byte[32];
        Arrays.fill(k, (byte) b);
        return k;
    }

    private static String rep(String hexByte, int n) {
        return hexByte.repeat(n);
    }

    @Test
    void familyLookup() {
        String expected = ""
                + "24000000" + "1000" + "0500" + "04030201" + "00000000" // nlmsghdr: 36 bytes, GENL_ID_CTRL, REQUEST|ACK, seq, pid
                + "03010000"                                             // genlmsghdr: CTRL_CMD_GETFAMILY, version 1
                + "0e000200" + "776972656775617264" + "00" + "0000";     // CTRL_ATTR_FAMILY_NAME "wireguard\0", padded
        assertThat(HEX.formatHex(WireguardGenl.getFamily(0x01020304))).isEqualTo(expected);
    }

    @Test
    void setDeviceAsUpstreamConfiguresFlannelWg() throws Exception {
        WireguardGenl.PeerSpec peer = new WireguardGenl.PeerSpec(filled(0x22), filled(0x33),
                (Inet4Address) InetAddress.getByName("192.0.2.2"), 51820, 25,
                List.of(new IpPrefix(InetAddress.getByName("10.244.2.0"), 24)), WireguardGenl.WGPEER_F_REPLACE_ALLOWEDIPS);
        byte[] msg = WireguardGenl.setDevice(0x1f, 1, "flannel-wg", filled(0x11), 51820, WireguardGenl.WGDEVICE_F_REPLACE_PEERS,
                List.of(peer));
        String expected = ""
                + "ec000000" + "1f00" + "0500" + "01000000" + "00000000"       // nlmsghdr: 236 bytes, the family id, REQUEST|ACK
                + "01010000"                                                   // WG_CMD_SET_DEVICE, WG_GENL_VERSION 1
                + "0f000200" + "666c616e6e656c2d7767" + "00" + "00"            // WGDEVICE_A_IFNAME "flannel-wg\0" + 1 pad
                + "24000300" + rep("11", 32)                                   // WGDEVICE_A_PRIVATE_KEY
                + "06000600" + "6cca" + "0000"                                 // WGDEVICE_A_LISTEN_PORT 51820 (u16, host order)
                + "08000500" + "01000000"                                      // WGDEVICE_A_FLAGS REPLACE_PEERS
                + "94000880"                                                   // WGDEVICE_A_PEERS | NLA_F_NESTED, 148 bytes
                + "90000080"                                                   //   peer 0 | NLA_F_NESTED, 144 bytes
                + "24000100" + rep("22", 32)                                   //     WGPEER_A_PUBLIC_KEY
                + "08000300" + "02000000"                                      //     WGPEER_A_FLAGS REPLACE_ALLOWEDIPS
                + "24000200" + rep("33", 32)                                   //     WGPEER_A_PRESHARED_KEY
                + "14000400" + "0200" + "ca6c" + "c0000202" + rep("00", 8)     //     WGPEER_A_ENDPOINT sockaddr_in 192.0.2.2:51820
                + "06000500" + "1900" + "0000"                                 //     WGPEER_A_PERSISTENT_KEEPALIVE_INTERVAL 25
                + "20000980"                                                   //     WGPEER_A_ALLOWEDIPS | NLA_F_NESTED, 32 bytes
                + "1c000080"                                                   //       allowed ip 0 | NLA_F_NESTED, 28 bytes
                + "06000100" + "0200" + "0000"                                 //         WGALLOWEDIP_A_FAMILY AF_INET
                + "08000200" + "0af40200"                                      //         WGALLOWEDIP_A_IPADDR 10.244.2.0
                + "05000300" + "18" + "000000";                                //         WGALLOWEDIP_A_CIDR_MASK 24
        assertThat(HEX.formatHex(msg)).isEqualTo(expected);
    }

    @Test
    void removingAPeerSendsOnlyItsKeyAndTheFlag() {
        WireguardGenl.PeerSpec gone = new WireguardGenl.PeerSpec(filled(0x44), null, null, 0, 0, List.of(),
                WireguardGenl.WGPEER_F_REMOVE_ME);
        byte[] msg = WireguardGenl.setDevice(0x1f, 2, "flannel-wg", null, 0, 0, List.of(gone));
        String expected = ""
                + "58000000" + "1f00" + "0500" + "02000000" + "00000000"       // 88 bytes
                + "01010000"
                + "0f000200" + "666c616e6e656c2d7767" + "00" + "00"
                + "34000880"                                                   // peers, 52 bytes
                + "30000080"                                                   //   peer 0, 48 bytes
                + "24000100" + rep("44", 32)
                + "08000300" + "01000000";                                     //     REMOVE_ME, nothing else
        assertThat(HEX.formatHex(msg)).isEqualTo(expected);
    }

    @Test
    void anIpv6PeerHasASockaddrIn6AndAnIpv6AllowedIp() throws Exception {
        WireguardGenl.PeerSpec peer = new WireguardGenl.PeerSpec(filled(0x55), null, InetAddress.getByName("2001:db8::2"), 51821, 0,
                List.of(new IpPrefix(InetAddress.getByName("fd00:0:0:7::"), 64)), WireguardGenl.WGPEER_F_REPLACE_ALLOWEDIPS);
        byte[] msg = WireguardGenl.setDevice(0x1f, 3, "flannel-wg-v6", null, 0, 0, List.of(peer));
        String expected = ""
                + "b0000000" + "1f00" + "0500" + "03000000" + "00000000"       // 176 bytes
                + "01010000"
                + "12000200" + "666c616e6e656c2d77672d7636" + "00" + "0000"    // "flannel-wg-v6\0", 2 pad
                + "88000880"                                                   // peers, 136 bytes
                + "84000080"                                                   //   peer 0, 132 bytes: 4 + 36 + 8 + 32 + 8 + 44
                + "24000100" + rep("55", 32)                                   //     WGPEER_A_PUBLIC_KEY
                + "08000300" + "02000000"                                      //     REPLACE_ALLOWEDIPS
                + "20000400" + "0a00" + "ca6d" + "00000000"                    //     WGPEER_A_ENDPOINT sockaddr_in6: AF_INET6, port 51821, flow 0,
                + "20010db8000000000000000000000002" + "00000000"              //       2001:db8::2, scope 0
                + "06000500" + "0000" + "0000"                                 //     keepalive 0: off
                + "2c000980"                                                   //     allowed IPs, 44 bytes
                + "28000080"                                                   //       allowed ip 0, 40 bytes
                + "06000100" + "0a00" + "0000"                                 //         AF_INET6
                + "14000200" + "fd000000000000070000000000000000"              //         fd00:0:0:7::
                + "05000300" + "40" + "000000";                                //         /64
        assertThat(HEX.formatHex(msg)).isEqualTo(expected);
    }
}
