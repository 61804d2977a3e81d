package org.jflannel.linuxnet.socket;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The echo requests a batch hands the kernel are byte for byte those sendEcho builds. */
class IcmpEchoBatchTest {

    @Test
    void requestsMatchTheSingleSendEncodingForEverySizeAndSequence() {
        IcmpEchoBatch b = new IcmpEchoBatch(8);
        int[] lengths = {28, 29, 84, 1450, 1451, 8950};
        for (int round = 0; round < 3; round++) { // more lengths than the sum cache holds: evictions too
            b.clear();
            for (int i = 0; i < lengths.length; i++) {
                int seq = 65535 - i * 7 - round;
                assertThat(b.add(0x0af40200 + i, 0xbeef, seq, lengths[i])).isTrue();
            }
            for (int i = 0; i < lengths.length; i++) {
                int seq = 65535 - i * 7 - round;
                assertThat(b.message(i)).as("len %d", lengths[i]).isEqualTo(IcmpCodec.echoRequest(0xbeef, seq, lengths[i]));
                byte[] sa = b.sockaddr(i);
                assertThat(sa[0]).as("AF_INET, little-endian").isEqualTo((byte) 2);
                assertThat(sa[1]).isZero();
                assertThat(new byte[] {sa[4], sa[5], sa[6], sa[7]}).isEqualTo(new byte[] {10, (byte) 244, 2, (byte) i});
            }
        }
    }

    @Test
    void fullBatchRefusesAndClearEmptiesIt() {
        IcmpEchoBatch b = new IcmpEchoBatch(2);
        assertThat(b.add(1, 1, 1, 84)).isTrue();
        assertThat(b.add(1, 1, 2, 84)).isTrue();
        assertThat(b.add(1, 1, 3, 84)).as("full").isFalse();
        assertThat(b.size()).isEqualTo(2);
        b.failed(1, IcmpSocket.EMSGSIZE);
        assertThat(b.errno(0)).isZero();
        assertThat(b.errnoName(1)).isEqualTo("EMSGSIZE");
        b.clear();
        assertThat(b.size()).isZero();
        assertThat(b.add(1, 1, 4, 84)).isTrue();
        assertThat(b.errno(0)).as("a slot's errno is reset when it is reused").isZero();
        assertThatThrownBy(() -> b.add(1, 1, 5, 27)).hasMessageContaining("28..65535");
    }
}
