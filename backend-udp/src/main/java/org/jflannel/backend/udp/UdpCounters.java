package org.jflannel.backend.udp;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * What the packet paths did, for metrics and tests: packets each way, ICMP replies sent, drops by
 * reason. Updated from the TUN readers and the socket readers at once, hence LongAdders.
 */
public final class UdpCounters {

    /** Why a packet was dropped. */
    public enum Drop {
        /** Not a whole IPv4 packet. */
        MALFORMED,
        /** IPv6 (or other) from the TUN: this backend is IPv4 only. */
        NOT_IPV4,
        /** No peer subnet contains the destination (an ICMP net-unreachable may have gone back). */
        NO_ROUTE,
        /** TTL reached zero. */
        TTL_ZERO,
        /** A datagram from an address no peer published. */
        UNKNOWN_PEER,
        /** Inner source outside every subnet of the sending peer. */
        SOURCE_MISMATCH,
        /** No room in the send backlog within a few milliseconds, or a socket error. */
        SEND_FAILED,
        /** The TUN refused the packet. */
        TUN_WRITE_FAILED
    }

    private final LongAdder toPeers = new LongAdder();
    private final LongAdder toPeersBytes = new LongAdder();
    private final LongAdder fromPeers = new LongAdder();
    private final LongAdder fromPeersBytes = new LongAdder();
    private final LongAdder icmpSent = new LongAdder();
    private final LongAdder trains = new LongAdder();
    private final LongAdder merged = new LongAdder();
    private final LongAdder tunWrites = new LongAdder();
    private final Map<Drop, LongAdder> drops = new EnumMap<>(Drop.class);
    private final Map<Drop, AtomicBoolean> seen = new EnumMap<>(Drop.class);

    public UdpCounters() {
        for (Drop d : Drop.values()) {
            drops.put(d, new LongAdder());
            seen.put(d, new AtomicBoolean());
        }
    }

    void sent(int bytes, int packets) {
        toPeers.add(packets);
        toPeersBytes.add(bytes);
    }

    void received(int bytes) {
        received(bytes, 1);
    }

    void received(long bytes, int packets) {
        fromPeers.add(packets);
        fromPeersBytes.add(bytes);
    }

    /** One receive batch: {@code trains} slots held more than one datagram (UDP GRO); {@code merged} segments went into super-packets; {@code writes} TUN writes. */
    void batch(int trains, long merged, long writes) {
        this.trains.add(trains);
        this.merged.add(merged);
        this.tunWrites.add(writes);
    }

    void icmpSent() {
        icmpSent.increment();
    }

    /** Counts a drop; true the first time this reason occurs (the caller logs that one). */
    boolean drop(Drop reason) {
        drops.get(reason).increment();
        return !seen.get(reason).getAndSet(true);
    }

    /** Packets read from the TUN and sent to a peer. */
    public long packetsToPeers() {
        return toPeers.sum();
    }

    public long bytesToPeers() {
        return toPeersBytes.sum();
    }

    /** Packets received from a peer and written to the TUN. */
    public long packetsFromPeers() {
        return fromPeers.sum();
    }

    public long bytesFromPeers() {
        return fromPeersBytes.sum();
    }

    /** Receives that returned a UDP GRO train (several datagrams of one peer at once). */
    public long groTrains() {
        return trains.sum();
    }

    /** Received TCP segments written to the TUN inside a merged super-packet. */
    public long segmentsCoalesced() {
        return merged.sum();
    }

    /** Writes to the TUN (a merged super-packet counts once). */
    public long tunWrites() {
        return tunWrites.sum();
    }

    public long icmpUnreachableSent() {
        return icmpSent.sum();
    }

    public long drops(Drop reason) {
        return drops.get(reason).sum();
    }
}
