package org.jflannel.linuxnet.socket;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.HexFormat;
import org.junit.jupiter.api.Test;

/** What a recvmmsg leaves in the slots, decoded without the kernel: fields, timestamps, packets that are not ours. */
class IcmpBatchTest {
    private static final HexFormat HEX = HexFormat.of();
    private static final byte[] REPLY = HEX.parseHex("4500001c000000004001000" + "00af40200" + "0af40100"
            + "00000000" + "12340005");
    private static final byte[] FRAG_NEEDED = HEX.parseHex("45000038000000004001000" + "0c0000201" + "0af40100"
            + "0304" + "0000" + "0000" + "0578" + "450005aa000040004001000" + "00af40100" + "0af40300"
            + "08000000" + "0042" + "0009");
    private static final byte[] REQUEST = HEX.parseHex("4500001c000000004001000" + "00af40200" + "0af40100"
            + "08000000" + "12340005");

    @Test
    void eachSlotIsDecodedWithItsKernelTimestamp() throws Exception {
        IcmpBatch b = new IcmpBatch(4);
        b.reset();
        b.fill(0, REPLY, 1_764_000_000_123_456_789L);
        b.fill(1, FRAG_NEEDED, 1_764_000_000_223_456_789L);
        b.fill(2, REQUEST, 5);
        b.decode(3);

        assertThat(b.kind(0)).isEqualTo(IcmpMessage.Kind.ECHO_REPLY);
        assertThat(b.id(0)).isEqualTo(0x1234);
        assertThat(b.seq(0)).isEqualTo(5);
        assertThat(b.from(0)).isEqualTo(0x0af40200);
        assertThat(b.target(0)).isEqualTo(IcmpSocket.address((java.net.Inet4Address) InetAddress.getByName("10.244.2.0")));
        assertThat(b.kernelTimestampNanos(0)).isEqualTo(1_764_000_000_123_456_789L);

        assertThat(b.kind(1)).isEqualTo(IcmpMessage.Kind.UNREACHABLE);
        assertThat(b.nextHopMtu(1)).isEqualTo(1400);
        assertThat(b.target(1)).as("where our echo went, from the quoted header").isEqualTo(0x0af40300);
        assertThat(b.from(1)).as("the router").isEqualTo(0xc0000201);
        assertThat(b.id(1)).isEqualTo(0x42);
        assertThat(b.seq(1)).isEqualTo(9);
        assertThat(b.kernelTimestampNanos(1)).isEqualTo(1_764_000_000_223_456_789L);
        IcmpMessage m = b.message(1);
        assertThat(m.fragmentationNeeded()).isTrue();
        assertThat(m.from()).isEqualTo(InetAddress.getByName("192.0.2.1"));
        assertThat(m.target()).isEqualTo(InetAddress.getByName("10.244.3.0"));

        assertThat(b.kind(2)).as("an echo request is not about ours").isNull();
    }

    @Test
    void slotWithoutTimestampSaysZeroAndATruncatedPacketIsNotOurs() {
        IcmpBatch b = new IcmpBatch(2);
        b.reset();
        b.fill(0, REPLY, 0);
        b.fill(1, java.util.Arrays.copyOf(FRAG_NEEDED, 40), 7); // cut inside the quoted header
        b.decode(2);
        assertThat(b.kind(0)).isEqualTo(IcmpMessage.Kind.ECHO_REPLY);
        assertThat(b.kernelTimestampNanos(0)).isZero();
        assertThat(b.kind(1)).isNull();
    }

    @Test
    void aFullSizeReplyKeepsOnlyItsHeadersInTheSlot() {
        byte[] big = java.util.Arrays.copyOf(REPLY, 1400); // a 1,400-byte echo reply: only the first SLOT bytes are kept
        IcmpBatch b = new IcmpBatch(1);
        b.reset();
        b.fill(0, big, 1);
        b.decode(1);
        assertThat(b.kind(0)).isEqualTo(IcmpMessage.Kind.ECHO_REPLY);
        assertThat(b.seq(0)).isEqualTo(5);
    }
}
