package org.jflannel.packet;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The bulk sum equals an independent byte-pair sum at every alignment and length, also for sums that carry a lot. */
class ChecksumTest {

    @ParameterizedTest(name = "from {0}, length {1}")
    @CsvSource({"0, 65536", "1, 65535", "3, 1400", "7, 129", "8, 128", "52, 1420", "5, 9001", "2, 127", "0, 0", "6, 3"})
    void bulkSumEqualsTheByteWiseSum(int from, int len) {
        ByteBuffer b = ByteBuffer.allocateDirect(70_000);
        Random r = new Random(from * 31L + len);
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) r.nextInt());
        }
        Checksum c = new Checksum();
        assertThat(c.sum(b, from, len)).isEqualTo(expected(b, from, len));
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) 0xff); // all ones: the most carries
        }
        assertThat(c.sum(b, from, len)).as("all 0xff").isEqualTo(expected(b, from, len));
    }

    private static int expected(ByteBuffer b, int from, int len) {
        byte[] bytes = new byte[len];
        for (int i = 0; i < len; i++) {
            bytes[i] = b.get(from + i);
        }
        return Packets.onesSum(bytes);
    }
}
