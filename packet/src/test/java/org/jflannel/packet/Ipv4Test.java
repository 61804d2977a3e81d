package org.jflannel.packet;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class Ipv4Test {

    /** Property: for any header (options included) and TTL ≥ 2, the patched checksum equals one computed from scratch. */
    @Test
    void incrementalChecksumEqualsFromScratchForRandomHeaders() {
        Random random = new Random(0x1624); // fixed seed: a failure reproduces
        for (int n = 0; n < 200_000; n++) {
            int ihl = 5 + random.nextInt(11);
            ByteBuffer p = ByteBuffer.allocate(ihl * 4);
            for (int i = 0; i < p.limit(); i++) {
                p.put(i, (byte) random.nextInt(256));
            }
            p.put(0, (byte) (0x40 | ihl));
            p.putShort(2, (short) p.limit());
            int ttl = 2 + random.nextInt(254);
            p.put(8, (byte) ttl);
            Packets.sealHeader(p);

            assertThat(Ipv4.decrementTtl(p)).isTrue();
            assertThat(Ipv4.ttl(p)).isEqualTo(ttl - 1);
            assertThat(Ipv4.checksum(p)).as("header #%d", n).isEqualTo(Ipv4.headerChecksumFromScratch(p));
            assertThat(Packets.headerVerifies(p)).isTrue();
        }
    }

    @ParameterizedTest(name = "ttl {0} -> forwarded {1}")
    @CsvSource({"0, false", "1, false", "2, true", "64, true", "255, true"})
    void ttlOneOrZeroIsDroppedAndLeftUntouched(int ttl, boolean forwarded) {
        ByteBuffer p = Packets.ipv4("10.244.1.2", "10.244.2.3", 17, ttl, 8);
        int checksum = Ipv4.checksum(p);

        assertThat(Ipv4.decrementTtl(p)).isEqualTo(forwarded);
        assertThat(Ipv4.ttl(p)).isEqualTo(forwarded ? ttl - 1 : ttl);
        if (!forwarded) {
            assertThat(Ipv4.checksum(p)).isEqualTo(checksum);
        }
        assertThat(Packets.headerVerifies(p)).isTrue();
    }

    /** RFC 1624 §3: eqn. 2 would give 0xFFFF where the correct checksum is 0x0000; eqn. 3 must not. */
    @Test
    void checksumThatBecomesZeroIsZeroNotFfff() {
        ByteBuffer p = withIdSoThatChecksumAfterDecrementIs(0x0000);

        assertThat(Ipv4.decrementTtl(p)).isTrue();
        assertThat(Ipv4.checksum(p)).isEqualTo(0x0000).isEqualTo(Ipv4.headerChecksumFromScratch(p));
        assertThat(Packets.headerVerifies(p)).isTrue();
    }

    /** Checksums around the 0x0100 step of the TTL word and around 0xFFFF/0x0000, where upstream's shortcut errs. */
    @ParameterizedTest(name = "checksum before 0x{0}")
    @CsvSource({"feff", "ff00", "ff01", "fffe", "00ff", "0100", "0001", "0000"})
    void checksumNearTheWrapIsPatchedLikeFromScratch(String hex) {
        ByteBuffer p = headerWithChecksum(64, Integer.parseInt(hex, 16));

        assertThat(Ipv4.decrementTtl(p)).isTrue();
        assertThat(Ipv4.checksum(p)).isEqualTo(Ipv4.headerChecksumFromScratch(p)).isNotEqualTo(0xffff);
        assertThat(Packets.headerVerifies(p)).isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "ok,                    45, 28, 28, true",
        "short total length,    45, 19, 28, false",
        "total beyond buffer,   45, 40, 28, false",
        "ihl below 5,           44, 28, 28, false",
        "ihl beyond buffer,     4f, 28, 28, false",
        "ipv6 version nibble,   65, 28, 28, false",
        "trailing bytes ok,     45, 24, 28, true",
        "buffer below 20,       45, 19, 19, false",
    })
    void validity(String name, String versionIhl, int totalLength, int bufferLength, boolean valid) {
        ByteBuffer p = ByteBuffer.allocate(bufferLength);
        p.put(0, (byte) Integer.parseInt(versionIhl, 16));
        if (bufferLength >= 4) {
            p.putShort(2, (short) totalLength);
        }
        assertThat(Ipv4.valid(p)).isEqualTo(valid);
    }

    @Test
    void firstFragmentIsOffsetZeroWhateverTheFlags() {
        assertThat(Ipv4.firstFragment(Packets.ipv4("10.0.0.1", "10.0.0.2", 6, 64, 8, 0x4000, 0))).as("DF").isTrue();
        assertThat(Ipv4.firstFragment(Packets.ipv4("10.0.0.1", "10.0.0.2", 6, 64, 8, 0x2000, 0))).as("MF, offset 0").isTrue();
        assertThat(Ipv4.firstFragment(Packets.ipv4("10.0.0.1", "10.0.0.2", 6, 64, 8, 0x2001, 0))).as("offset 8").isFalse();
    }

    /** A header whose checksum after one decrement (computed from scratch) is {@code target}, found by choosing the ID. */
    private static ByteBuffer withIdSoThatChecksumAfterDecrementIs(int target) {
        ByteBuffer p = headerWithChecksum(63, target);
        p.put(8, (byte) 64);
        Packets.sealHeader(p);
        return p;
    }

    /** A sealed header with TTL {@code ttl} whose checksum is {@code target}, found by choosing the ID. */
    private static ByteBuffer headerWithChecksum(int ttl, int target) {
        ByteBuffer p = Packets.ipv4("10.244.1.2", "10.244.2.3", 6, ttl, 0, 0x4000, 0);
        for (int id = 0; id <= 0xffff; id++) {
            p.putShort(4, (short) id);
            if (Ipv4.headerChecksumFromScratch(p) == target) {
                Packets.sealHeader(p);
                return p;
            }
        }
        throw new AssertionError("no id gives checksum 0x" + Integer.toHexString(target));
    }
}
