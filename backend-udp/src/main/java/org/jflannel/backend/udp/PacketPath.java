package org.jflannel.backend.udp;

import java.nio.ByteBuffer;
import org.jflannel.backend.udp.UdpCounters.Drop;
import org.jflannel.packet.Ipv4;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The forwarding decisions of both directions, free of I/O so they can be tested on byte buffers:
 * which peer a packet from the TUN goes to (or the ICMP reply to write back), and whether a
 * datagram from a peer may enter the TUN. Packets are edited in place (TTL, checksum). Drops are
 * counted; the first of each reason is logged.
 */
final class PacketPath {
    private static final Logger LOG = LoggerFactory.getLogger(PacketPath.class);

    private final UdpCounters counters;
    private volatile PeerTable peers = PeerTable.EMPTY;

    PacketPath(UdpCounters counters) {
        this.counters = counters;
    }

    void peers(PeerTable table) {
        this.peers = table;
    }

    PeerTable peers() {
        return peers;
    }

    UdpCounters counters() {
        return counters;
    }

    /**
     * TUN → UDP. Returns the peer to send {@code packet} to (TTL already decremented), or null when
     * it is dropped; when no peer owns the destination and the packet deserves an ICMP reply, the
     * reply is in {@code icmpOut} with {@code icmpOut.limit() > 0}.
     */
    Peer outbound(ByteBuffer packet, ByteBuffer icmpOut) {
        icmpOut.clear().limit(0);
        if (Ipv4.version(packet) != 4) {
            // the kernel sends its own IPv6 (router solicitations, MLD) into flannel0: expected, so DEBUG only
            counters.drop(Drop.NOT_IPV4);
            LOG.debug("packet from tun dropped reason=not-ipv4 version={}", Ipv4.version(packet));
            return null;
        }
        if (!Ipv4.valid(packet)) {
            drop(Drop.MALFORMED, "packet from tun dropped reason=malformed length={}", packet.limit());
            return null;
        }
        Peer peer = peers.route(Ipv4.destination(packet));
        if (peer == null) {
            drop(Drop.NO_ROUTE, "packet from tun dropped reason=no-route dst={}", Ipv4.describe(Ipv4.destination(packet)));
            if (IcmpUnreachable.eligible(packet)) {
                IcmpUnreachable.write(packet, icmpOut);
                counters.icmpSent();
            }
            return null;
        }
        return ttl(packet) ? peer : null;
    }

    /** UDP → TUN: true when {@code packet}, received from {@code sender}, may be written to the TUN (TTL decremented). */
    boolean inbound(ByteBuffer packet, int sender) {
        return inbound(packet, 0, packet.limit(), sender);
    }

    /**
     * {@link #inbound(ByteBuffer, int)} for the datagram at {@code [at, at + len)} of a receive
     * buffer (one segment of a UDP GRO train): no view is allocated per packet.
     */
    boolean inbound(ByteBuffer b, int at, int len, int sender) {
        PeerTable table = peers;
        if (!table.knowsSender(sender)) {
            drop(Drop.UNKNOWN_PEER, "datagram dropped reason=unknown-peer from={}", Ipv4.describe(sender));
            return false;
        }
        if (!Ipv4.valid(b, at, len)) {
            drop(Drop.MALFORMED, "datagram dropped reason=malformed from={} length={}", Ipv4.describe(sender), len);
            return false;
        }
        if (!table.allows(sender, Ipv4.source(b, at))) {
            drop(Drop.SOURCE_MISMATCH, "datagram dropped reason=source-not-in-peer-subnet from={} src={}",
                    Ipv4.describe(sender), Ipv4.describe(Ipv4.source(b, at)));
            return false;
        }
        if (Ipv4.decrementTtl(b, at)) {
            return true;
        }
        zeroTtl(b, at);
        return false;
    }

    private boolean ttl(ByteBuffer packet) {
        if (Ipv4.decrementTtl(packet)) {
            return true;
        }
        zeroTtl(packet, 0);
        return false;
    }

    private void zeroTtl(ByteBuffer b, int at) {
        boolean first = counters.drop(Drop.TTL_ZERO);
        if (first || LOG.isDebugEnabled()) { // upstream's line; later ones only at DEBUG (per packet)
            String line = "Discarding IP fragment " + Ipv4.describe(Ipv4.source(b, at)) + " -> "
                    + Ipv4.describe(Ipv4.destination(b, at)) + " due to zero TTL";
            if (first) {
                LOG.warn(line);
            } else {
                LOG.debug(line);
            }
        }
    }

    void drop(Drop reason, String format, Object... args) {
        if (counters.drop(reason)) {
            LOG.warn(format + " (first of its kind; later ones are counted, logged at DEBUG)", args);
        } else if (LOG.isDebugEnabled()) {
            LOG.debug(format, args);
        }
    }
}
