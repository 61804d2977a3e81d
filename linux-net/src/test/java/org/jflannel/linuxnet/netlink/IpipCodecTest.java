package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** The ipip link: the create request byte for byte, and a kernel-shaped RTM_NEWLINK decoded. */
class IpipCodecTest {

    /** Hand-derived from struct nlmsghdr, ifinfomsg, rtattr and linux/if_tunnel.h's IFLA_IPTUN_*. */
    @Test
    void createCarriesLocalThenUpstreamsPmtudiscTtlTosAndEncapAttributes() throws Exception {
        String expected = ""
                + "88000000" + "1000" + "0506" + "01000000" + "00000000"   // nlmsghdr: len 136, RTM_NEWLINK, REQUEST|ACK|EXCL|CREATE, seq 1
                + "00000000" + "00000000" + "00000000" + "00000000"         // ifinfomsg: AF_UNSPEC, index 0, flags 0, change 0
                + "11000300" + "666c616e6e656c2e69706970" + "00" + "000000" // IFLA_IFNAME "flannel.ipip\0" + pad
                + "54001200"                                                // IFLA_LINKINFO (84 bytes)
                + "09000100" + "69706970" + "00" + "000000"                 //   IFLA_INFO_KIND "ipip\0" + pad
                + "44000200"                                                //   IFLA_INFO_DATA (68 bytes)
                + "08000200" + "c0000201"                                   //     IFLA_IPTUN_LOCAL 192.0.2.1
                + "05000a00" + "00000000"                                   //     IFLA_IPTUN_PMTUDISC 0 (nopmtudisc)
                + "05000400" + "00000000"                                   //     IFLA_IPTUN_TTL 0 (inherit)
                + "05000500" + "00000000"                                   //     IFLA_IPTUN_TOS 0
                + "06000f00" + "0000" + "0000"                              //     IFLA_IPTUN_ENCAP_TYPE 0 (none)
                + "06001000" + "0000" + "0000"                              //     IFLA_IPTUN_ENCAP_FLAGS 0
                + "06001100" + "0000" + "0000"                              //     IFLA_IPTUN_ENCAP_SPORT 0
                + "06001200" + "0000" + "0000";                             //     IFLA_IPTUN_ENCAP_DPORT 0
        NlWriter w = NlWriter.heap(4096).begin(16, 0x605, 1);
        LinkCodec.newIpip(w, "flannel.ipip", (Inet4Address) InetAddress.getByName("192.0.2.1"));
        assertThat(HexFormat.of().formatHex(w.finishBytes())).isEqualTo(expected);
    }

    @Test
    void withoutLocalNoLocalAttributeIsSent() {
        NlWriter w = NlWriter.heap(4096).begin(16, 0x605, 1);
        LinkCodec.newIpip(w, "t", null);
        assertThat(HexFormat.of().formatHex(w.finishBytes())).doesNotContain("08000200").contains("05000a00" + "00000000");
    }

    /** What the kernel reports for {@code ipip local 192.0.2.1 remote any ttl inherit nopmtudisc}, MTU 1480, up. */
    @Test
    void kernelReplyDecodesTheTunnelAttributes() throws Exception {
        NlWriter w = NlWriter.heap(4096).begin(Rtnl.RTM_NEWLINK, 0, 1);
        w.ifinfomsg(0, 7, Link.IFF_UP, 0);
        w.attrString(Rtnl.IFLA_IFNAME, "flannel.ipip");
        w.attrU32(Rtnl.IFLA_MTU, 1480);
        w.attr(Rtnl.IFLA_ADDRESS, new byte[] {(byte) 192, 0, 2, 1}); // a tunnel's 4-byte "hardware" address
        int info = w.nest(Rtnl.IFLA_LINKINFO);
        w.attrString(Rtnl.IFLA_INFO_KIND, "ipip");
        int data = w.nest(Rtnl.IFLA_INFO_DATA);
        w.attrU32(Rtnl.IFLA_IPTUN_LINK, 0);
        w.attr(Rtnl.IFLA_IPTUN_LOCAL, new byte[] {(byte) 192, 0, 2, 1});
        w.attr(Rtnl.IFLA_IPTUN_REMOTE, new byte[] {0, 0, 0, 0});
        w.attrU8(Rtnl.IFLA_IPTUN_TTL, 0);
        w.attrU8(Rtnl.IFLA_IPTUN_TOS, 0);
        w.attrU8(Rtnl.IFLA_IPTUN_PROTO, 4);
        w.attrU8(Rtnl.IFLA_IPTUN_PMTUDISC, 0);
        w.attrU16(Rtnl.IFLA_IPTUN_ENCAP_TYPE, 0);
        w.end(data);
        w.end(info);
        byte[] msg = w.finishBytes();
        ByteBuffer b = ByteBuffer.wrap(msg).order(ByteOrder.LITTLE_ENDIAN);

        Link l = LinkCodec.decode(b, 16, msg.length - 16);

        assertThat(l.kind()).isEqualTo("ipip");
        assertThat(l.name()).isEqualTo("flannel.ipip");
        assertThat(l.mtu()).isEqualTo(1480);
        assertThat(l.mac()).isNull();
        assertThat(l.vxlan()).isNull();
        assertThat(l.iptun()).isEqualTo(new IptunInfo((Inet4Address) InetAddress.getByName("192.0.2.1"), null, 0, 0, 0,
                false, 4, 0, false));
    }

    /** NetlinkDecodeFuzzTest's ipip seeds (first byte: the decoder, 0 = RTM_NEWLINK) reach the tunnel attributes. */
    @Test
    void theFuzzSeedsDecodeAsIpipLinks() throws Exception {
        Link flannel = seed("ipip-flannel-newlink");
        assertThat(flannel.kind()).isEqualTo("ipip");
        assertThat(flannel.name()).isEqualTo("flannel.ipip");
        assertThat(flannel.mtu()).isEqualTo(1480);
        assertThat(flannel.iptun()).isEqualTo(new IptunInfo((Inet4Address) InetAddress.getByName("192.0.2.1"), null, 0, 0, 0,
                false, 4, 0, false));
        assertThat(seed("ipip-remote-ttl-tos-newlink").iptun()).isEqualTo(new IptunInfo(
                (Inet4Address) InetAddress.getByName("192.0.2.1"), (Inet4Address) InetAddress.getByName("198.51.100.7"),
                0, 64, 10, true, 4, 0, false));
        assertThat(seed("ipip-external-newlink").iptun().external()).isTrue();
        assertThat(seed("ipip-mpls-any-proto-newlink").iptun().proto()).isZero();
    }

    private static Link seed(String name) throws Exception {
        byte[] in;
        try (var s = IpipCodecTest.class.getResourceAsStream("NetlinkDecodeFuzzTestInputs/rtnetlinkMessages/" + name)) {
            in = s.readAllBytes();
        }
        ByteBuffer b = ByteBuffer.wrap(in, 1, in.length - 1).slice().order(ByteOrder.nativeOrder());
        return LinkCodec.decode(b, 0, b.limit());
    }

    @Test
    void otherKindsCarryNoTunnelInfo() {
        assertThat(new Link(3, "eth0", "veth", 1500, null, true, 1, null).iptun()).isNull();
    }
}
