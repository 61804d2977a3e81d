package org.jflannel.linuxnet.socket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A receive replayed into the batch: the control messages the kernel wrote, parsed whatever they say. */
class DatagramBatchTest {

    private static byte[] sockaddr() {
        return ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putShort((short) 2).order(ByteOrder.BIG_ENDIAN)
            .putShort((short) 8285).putInt(0xc0000202).array();
    }

    private static byte[] cmsg(long len, int level, int type, int value) {
        return ByteBuffer.allocate(24).order(ByteOrder.nativeOrder()).putLong(len).putInt(level).putInt(type).putInt(value).array();
    }

    @Test
    void groSegmentSizeSenderAndTruncation() {
        DatagramBatch b = new DatagramBatch(2, 100);
        b.replay(0, new byte[300], 0, 90, sockaddr(), cmsg(20, 17, 104, 30));
        b.replay(1, new byte[300], 0, 150, sockaddr(), new byte[0]);
        b.replayed(2);
        assertThat(b.segmentSize(0)).isEqualTo(30);
        assertThat(b.senderAddress(0)).isEqualTo(0xc0000202);
        assertThat(b.senderPort(0)).isEqualTo(8285);
        assertThat(b.truncated(0)).isFalse();
        assertThat(b.truncated(1)).isTrue();
        assertThat(b.length(1)).isEqualTo(100);
        assertThat(b.segmentSize(1)).isEqualTo(100); // no UDP_GRO message: the whole length
    }

    @Test
    void anOverlongControlMessageLengthEndsTheParse() {
        DatagramBatch b = new DatagramBatch(1, 100);
        // (int) ((2^62 + 7) & ~7) is 0: the parse stepped by nothing, forever (found by UdpDatapathFuzzTest)
        b.replay(0, new byte[64], 0, 64, sockaddr(), cmsg(1L << 62, 17, 104, 30));
        assertTimeoutPreemptively(Duration.ofSeconds(10), () -> b.replayed(1));
        assertThat(b.segmentSize(0)).isEqualTo(64);
    }
}
