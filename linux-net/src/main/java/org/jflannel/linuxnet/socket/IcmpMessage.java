package org.jflannel.linuxnet.socket;

import java.net.Inet4Address;
import java.util.Objects;

/**
 * An ICMPv4 message that concerns one of our echo requests: the echo reply itself, or an error a
 * router or the peer sent back about it (the request's id and sequence are read from the quoted
 * original).
 *
 * @param from       who sent this message (the peer for a reply, a router or the peer for an error)
 * @param kind       reply or which error
 * @param code       the ICMP code (for {@link Kind#UNREACHABLE} 4 = fragmentation needed)
 * @param target     where our echo request was going
 * @param id         the echo identifier we sent
 * @param seq        the echo sequence number we sent
 * @param nextHopMtu for fragmentation needed: the MTU the router reported, else 0
 */
public record IcmpMessage(Inet4Address from, Kind kind, int code, Inet4Address target, int id, int seq,
                          int nextHopMtu) {

    /** What came back. */
    public enum Kind { ECHO_REPLY, UNREACHABLE, TIME_EXCEEDED }

    public static final int CODE_FRAG_NEEDED = 4;

    public IcmpMessage {
        Objects.requireNonNull(from, "icmp from");
        Objects.requireNonNull(kind, "icmp kind");
        Objects.requireNonNull(target, "icmp target");
    }

    public boolean fragmentationNeeded() {
        return kind == Kind.UNREACHABLE && code == CODE_FRAG_NEEDED;
    }
}
