package org.jflannel.linuxnet.socket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

class IcmpCodecTest {
    private static final HexFormat HEX = HexFormat.of();

    @Test
    void emptyEchoRequestHasTypeIdSeqAndTheInternetChecksum() {
        byte[] b = IcmpCodec.echoRequest(0x1234, 0x0001, 28);
        // 08 00 | checksum | 12 34 | 00 01: sum = 0x0800 + 0x1234 + 0x0001 = 0x1a35, ~ = 0xe5ca
        assertThat(HEX.formatHex(b)).isEqualTo("0800e5ca12340001");
        assertThat(IcmpCodec.checksum(b, 0, b.length)).as("a packet with its checksum sums to 0").isZero();
    }

    @Test
    void fullSizeEchoRequestFillsTheIpLengthAndStillChecksumsToZero() {
        byte[] b = IcmpCodec.echoRequest(7, 65535, 1450);
        assertThat(b).hasSize(1430);
        assertThat(IcmpCodec.checksum(b, 0, b.length)).isZero();
    }

    @Test
    void echoWrittenIntoTheSendBufferIsByteForByteTheSameAsTheBuiltOne() {
        ByteBuffer out = ByteBuffer.allocateDirect(2000);
        IcmpCodec.fillPayloadPattern(out);
        java.util.Map<Integer, Long> sums = new java.util.HashMap<>();
        for (int len : new int[] {28, 84, 1450, 1451}) {
            for (int seq : new int[] {0, 1, 0xfffe, 0xffff}) {
                int n = IcmpCodec.writeEchoRequest(out, 0xbeef, seq, len, sums);
                byte[] written = new byte[n];
                out.get(0, written);
                assertThat(written).as("len %d seq %d", len, seq).isEqualTo(IcmpCodec.echoRequest(0xbeef, seq, len));
            }
        }
    }

    @Test
    void tooSmallLengthIsRefusedNamingTheField() {
        assertThatThrownBy(() -> IcmpCodec.echoRequest(1, 1, 27)).hasMessageContaining("IP length must be 28..65535");
    }

    @Test
    void echoReplyIsParsedWithIdSeqAndSource() throws Exception {
        // IPv4 header from 10.244.2.0 to 10.244.1.0, proto 1, then echo reply id 0x1234 seq 5
        ByteBuffer p = ByteBuffer.wrap(HEX.parseHex("4500001c000000004001000" + "00af40200" + "0af40100"
                + "00000000" + "12340005"));
        IcmpMessage m = IcmpCodec.parse(p).orElseThrow();
        assertThat(m.kind()).isEqualTo(IcmpMessage.Kind.ECHO_REPLY);
        assertThat(m.from()).isEqualTo(InetAddress.getByName("10.244.2.0"));
        assertThat(m.target()).isEqualTo(m.from());
        assertThat(m.id()).isEqualTo(0x1234);
        assertThat(m.seq()).isEqualTo(5);
    }

    @Test
    void fragmentationNeededQuotesOurEchoAndCarriesTheNextHopMtu() throws Exception {
        String outer = "45000038000000004001000" + "0c0000201" + "0af40100"; // from router 192.0.2.1
        String icmp = "0304" + "0000" + "0000" + "0578";                    // type 3 code 4, mtu 1400
        String innerIp = "450005aa000040004001000" + "00af40100" + "0af40300"; // to 10.244.3.0
        String innerEcho = "08000000" + "0042" + "0009";
        IcmpMessage m = IcmpCodec.parse(ByteBuffer.wrap(HEX.parseHex(outer + icmp + innerIp + innerEcho))).orElseThrow();
        assertThat(m.fragmentationNeeded()).isTrue();
        assertThat(m.nextHopMtu()).isEqualTo(1400);
        assertThat(m.target()).isEqualTo((Inet4Address) InetAddress.getByName("10.244.3.0"));
        assertThat(m.id()).isEqualTo(0x42);
        assertThat(m.seq()).isEqualTo(9);
    }

    @Test
    void echoRequestsAndTruncatedPacketsAreNotMessagesForUs() {
        ByteBuffer request = ByteBuffer.wrap(HEX.parseHex("4500001c000000004001000" + "00af40200" + "0af40100"
                + "08000000" + "12340005"));
        assertThat(IcmpCodec.parse(request)).isEmpty();
        assertThat(IcmpCodec.parse(ByteBuffer.wrap(HEX.parseHex("4500001c0000")))).isEmpty();
    }
}
