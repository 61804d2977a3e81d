package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.List;
import org.jflannel.backend.udp.UdpCounters.Drop;
import org.jflannel.core.Ip4Net;
import org.jflannel.packet.Ipv4;
import org.jflannel.packet.Packets;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class PacketPathTest {
    private static final int TCP = 6;
    private final PacketPath path = new PacketPath(new UdpCounters());
    private final ByteBuffer icmp = ByteBuffer.allocateDirect(128);

    @BeforeEach
    void peers() {
        path.peers(PeerTable.of(List.of(PeerTableTest.peer("10.244.2.0/24", "192.0.2.2"),
                PeerTableTest.peer("10.244.3.0/24", "192.0.2.3"))));
    }

    @Test
    void outboundPicksThePeerAndDecrementsTheTtl() {
        ByteBuffer p = Packets.ipv4("10.244.1.5", "10.244.3.9", TCP, 64, 10);

        Peer peer = path.outbound(p, icmp);

        assertThat(peer.subnet()).isEqualTo(Ip4Net.parse("10.244.3.0/24"));
        assertThat(Ipv4.ttl(p)).isEqualTo(63);
        assertThat(Packets.headerVerifies(p)).isTrue();
        assertThat(icmp.limit()).isZero();
    }

    @Test
    void outboundWithoutPeerAnswersWithIcmpNetUnreachable() {
        ByteBuffer p = Packets.ipv4("10.244.1.5", "10.244.9.9", TCP, 64, 10);

        assertThat(path.outbound(p, icmp)).isNull();

        assertThat(icmp.limit()).isPositive();
        assertThat(Ipv4.source(icmp)).isEqualTo(Ip4Net.parseAddress("10.244.9.9"));
        assertThat(path.counters().drops(Drop.NO_ROUTE)).isEqualTo(1);
        assertThat(path.counters().icmpUnreachableSent()).isEqualTo(1);
    }

    @Test
    void outboundIcmpWithoutPeerIsDroppedSilently() {
        assertThat(path.outbound(Packets.ipv4("10.244.1.5", "10.244.9.9", Ipv4.PROTO_ICMP, 64, 10), icmp)).isNull();
        assertThat(icmp.limit()).isZero();
        assertThat(path.counters().icmpUnreachableSent()).isZero();
    }

    @Test
    void outboundTtlOneIsDroppedAndCounted() {
        assertThat(path.outbound(Packets.ipv4("10.244.1.5", "10.244.2.9", TCP, 1, 10), icmp)).isNull();
        assertThat(path.counters().drops(Drop.TTL_ZERO)).isEqualTo(1);
    }

    @Test
    void outboundIpv6AndGarbageAreCountedApart() {
        ByteBuffer v6 = ByteBuffer.allocate(40);
        v6.put(0, (byte) 0x60);
        ByteBuffer garbage = ByteBuffer.allocate(10);
        garbage.put(0, (byte) 0x45);

        assertThat(path.outbound(v6, icmp)).isNull();
        assertThat(path.outbound(garbage, icmp)).isNull();
        assertThat(path.outbound(ByteBuffer.allocate(0), icmp)).isNull();

        assertThat(path.counters().drops(Drop.NOT_IPV4)).isEqualTo(2);
        assertThat(path.counters().drops(Drop.MALFORMED)).isEqualTo(1);
    }

    @Test
    void inboundFromAPeerWithASourceInItsSubnetIsAccepted() {
        ByteBuffer p = Packets.ipv4("10.244.2.7", "10.244.1.5", TCP, 64, 10);

        assertThat(path.inbound(p, Ip4Net.parseAddress("192.0.2.2"))).isTrue();
        assertThat(Ipv4.ttl(p)).isEqualTo(63);
        assertThat(Packets.headerVerifies(p)).isTrue();
    }

    @Test
    void inboundWithASourceOutsideTheSendersSubnetIsDropped() {
        ByteBuffer spoofed = Packets.ipv4("10.244.3.7", "10.244.1.5", TCP, 64, 10); // 10.244.3.0/24 is 192.0.2.3's

        assertThat(path.inbound(spoofed, Ip4Net.parseAddress("192.0.2.2"))).isFalse();
        assertThat(path.counters().drops(Drop.SOURCE_MISMATCH)).isEqualTo(1);
        assertThat(Ipv4.ttl(spoofed)).as("untouched").isEqualTo(64);
    }

    @Test
    void inboundFromAnUnknownSenderIsDropped() {
        assertThat(path.inbound(Packets.ipv4("10.244.2.7", "10.244.1.5", TCP, 64, 10), Ip4Net.parseAddress("192.0.2.99"))).isFalse();
        assertThat(path.counters().drops(Drop.UNKNOWN_PEER)).isEqualTo(1);
    }

    @Test
    void inboundMalformedAndTtlOneAreDroppedAndForwardingGoesOn() {
        ByteBuffer truncated = Packets.ipv4("10.244.2.7", "10.244.1.5", TCP, 64, 10);
        truncated.limit(15);
        int peer = Ip4Net.parseAddress("192.0.2.2");

        assertThat(path.inbound(truncated, peer)).isFalse();
        assertThat(path.inbound(Packets.ipv4("10.244.2.7", "10.244.1.5", TCP, 1, 10), peer)).isFalse();
        assertThat(path.inbound(Packets.ipv4("10.244.2.7", "10.244.1.5", TCP, 64, 10), peer)).isTrue();

        assertThat(path.counters().drops(Drop.MALFORMED)).isEqualTo(1);
        assertThat(path.counters().drops(Drop.TTL_ZERO)).isEqualTo(1);
    }
}
