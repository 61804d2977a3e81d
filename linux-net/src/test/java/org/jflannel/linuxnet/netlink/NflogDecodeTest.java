package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

class NflogDecodeTest {
    /** An NFULNL_MSG_PACKET as the kernel builds it: nfgenmsg, then PACKET_HDR, PREFIX and PAYLOAD among others. */
    private static byte[] packetMessage(int family, String prefix, byte[] payload) {
        NlWriter w = NlWriter.heap(512);
        w.begin((Nflog.NFNL_SUBSYS_ULOG << 8) | Nflog.NFULNL_MSG_PACKET, 0, 0);
        w.u8(family).u8(0).u8(0x12).u8(0x34);
        w.attr(Nflog.NFULA_PACKET_HDR, new byte[] {0x08, 0x00, 2, 0}); // hw_protocol 0x0800, hook 2 (forward)
        w.attr(4, new byte[] {0, 0, 0, 3}); // NFULA_IFINDEX_INDEV, big-endian
        w.attrString(Nflog.NFULA_PREFIX, prefix);
        w.attr(Nflog.NFULA_PAYLOAD, payload);
        return w.finishBytes();
    }

    @Test
    void aPacketMessageGivesItsFamilyHookPrefixAndPayload() {
        byte[] ip = {0x45, 0, 0, 28, 1, 2, 3, 4};
        byte[] msg = packetMessage(2, "jflannel-netpol ingress", ip);
        List<Nflog.NflogPacket> got = Nflog.decode(buffer(msg, msg), msg.length * 2);
        assertThat(got).hasSize(2);
        assertThat(got.get(0).family()).isEqualTo(2);
        assertThat(got.get(0).hook()).isEqualTo(2);
        assertThat(got.get(0).prefix()).isEqualTo("jflannel-netpol ingress");
        assertThat(got.get(0).payload()).isEqualTo(ip);
    }

    @Test
    void truncatedOrOtherMessagesAreSkippedNeverReadPast() {
        byte[] msg = packetMessage(10, "p", new byte[40]);
        for (int n = 0; n < msg.length; n++) {
            ByteBuffer b = buffer(java.util.Arrays.copyOf(msg, n));
            assertThat(Nflog.decode(b, n)).as("%d of %d bytes", n, msg.length).isEmpty();
        }
        NlWriter w = NlWriter.heap(64);
        w.begin((Nflog.NFNL_SUBSYS_ULOG << 8) | Nflog.NFULNL_MSG_CONFIG, 0, 0);
        w.u8(0).u8(0).u8(0).u8(0);
        byte[] config = w.finishBytes();
        assertThat(Nflog.decode(buffer(config), config.length)).isEmpty();
        byte[] noPayload = packetMessage(2, "p", new byte[0]);
        assertThat(Nflog.decode(buffer(noPayload), noPayload.length)).hasSize(1);
    }

    private static ByteBuffer buffer(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += (p.length + 3) & ~3;
        }
        ByteBuffer b = ByteBuffer.allocate(Math.max(n, 1)).order(ByteOrder.nativeOrder());
        for (byte[] p : parts) {
            b.put(p);
            b.position((b.position() + 3) & ~3);
        }
        return b.clear();
    }
}
