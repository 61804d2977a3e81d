package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import org.jflannel.core.Ip4Net;
import org.jflannel.packet.Ipv4;
import org.jflannel.packet.Packets;
import org.junit.jupiter.api.Test;

class IcmpUnreachableTest {
    private static final int TCP = 6;
    private static final int UDP = 17;

    @Test
    void replyGoesFromTheUnreachableDestinationToTheSenderWithTtl8AndValidChecksums() {
        ByteBuffer offender = Packets.ipv4("10.244.1.5", "10.244.9.7", TCP, 63, 40);
        ByteBuffer out = ByteBuffer.allocateDirect(128);

        IcmpUnreachable.write(offender, out);

        assertThat(out.limit()).isEqualTo(20 + 8 + 20 + 8);
        assertThat(Ipv4.valid(out)).isTrue();
        assertThat(Ipv4.totalLength(out)).isEqualTo(out.limit());
        assertThat(Ipv4.ttl(out)).isEqualTo(8);
        assertThat(Ipv4.protocol(out)).isEqualTo(Ipv4.PROTO_ICMP);
        assertThat(Ipv4.source(out)).isEqualTo(Ip4Net.parseAddress("10.244.9.7"));
        assertThat(Ipv4.destination(out)).isEqualTo(Ip4Net.parseAddress("10.244.1.5"));
        assertThat(Ipv4.firstFragment(out)).isTrue();
        assertThat(Packets.headerVerifies(out)).as("IP header checksum").isTrue();
        assertThat(Ipv4.internetChecksum(out, 20, out.limit() - 20)).as("ICMP checksum verifies").isZero();
        assertThat(out.get(20)).as("type destination unreachable").isEqualTo((byte) 3);
        assertThat(out.get(21)).as("code network unreachable").isEqualTo((byte) 0);
        assertThat(out.getInt(24)).as("unused").isZero();
        for (int i = 0; i < 28; i++) {
            assertThat(out.get(28 + i)).as("quoted byte %d", i).isEqualTo(offender.get(i));
        }
    }

    @Test
    void aShortOffenderIsQuotedWhole() {
        ByteBuffer offender = Packets.ipv4("10.244.1.5", "10.244.9.7", UDP, 64, 3);
        ByteBuffer out = ByteBuffer.allocateDirect(128);

        IcmpUnreachable.write(offender, out);

        assertThat(out.limit()).isEqualTo(20 + 8 + 23);
        assertThat(Ipv4.internetChecksum(out, 20, out.limit() - 20)).as("odd-length ICMP checksum verifies").isZero();
    }

    @Test
    void notForIcmpNorForLaterFragments() {
        assertThat(IcmpUnreachable.eligible(Packets.ipv4("10.0.0.1", "10.0.0.2", Ipv4.PROTO_ICMP, 64, 8))).isFalse();
        assertThat(IcmpUnreachable.eligible(Packets.ipv4("10.0.0.1", "10.0.0.2", UDP, 64, 8, 0x0010, 1))).isFalse();
        assertThat(IcmpUnreachable.eligible(Packets.ipv4("10.0.0.1", "10.0.0.2", UDP, 64, 8, 0x2000, 1))).as("first of several").isTrue();
        assertThat(IcmpUnreachable.eligible(Packets.ipv4("10.0.0.1", "10.0.0.2", TCP, 64, 8))).isTrue();
    }
}
