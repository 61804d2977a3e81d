package org.jflannel.netpol;

import java.util.List;
import java.util.SortedMap;
import java.util.SortedSet;

/**
 * One node's compiled policy, in the shape of its nftables table: address sets (the pods one peer selects,
 * per family), port sets (address, protocol, port: the destinations of a named port for egress), and one
 * chain per isolated local pod and direction, holding what it allows (anything else is dropped).
 * Built by {@link Compiler}, rendered by {@link NftScript}.
 */
public record NodeRules(String node, SortedMap<String, AddrSet> sets, SortedMap<String, PortSet> portSets,
                        List<PodChain> chains) {
    public NodeRules {
        sets = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(sets));
        portSets = java.util.Collections.unmodifiableSortedMap(new java.util.TreeMap<>(portSets));
        chains = List.copyOf(chains);
    }

    /** Addresses of one family. */
    public record AddrSet(String name, int family, SortedSet<Addr> elements) {
        public AddrSet {
            elements = java.util.Collections.unmodifiableSortedSet(new java.util.TreeSet<>(elements));
        }
    }

    /** (address, protocol, port) triples of one family. */
    public record PortSet(String name, int family, SortedSet<PortElement> elements) {
        public PortSet {
            elements = java.util.Collections.unmodifiableSortedSet(new java.util.TreeSet<>(elements));
        }
    }

    /** One element of a {@link PortSet}. */
    public record PortElement(Addr addr, Protocol protocol, int port) implements Comparable<PortElement> {
        @Override
        public int compareTo(PortElement o) {
            int c = addr.compareTo(o.addr);
            if (c == 0) {
                c = protocol.compareTo(o.protocol);
            }
            return c != 0 ? c : Integer.compare(port, o.port);
        }
    }

    /** A local pod's chain for one direction: the packets it allows; the rest is dropped. */
    public record PodChain(String name, String pod, Direction direction, List<Addr> addresses, List<Allow> allows) {
        public PodChain {
            addresses = List.copyOf(addresses);
            allows = List.copyOf(allows);
        }
    }

    /** What a chain allows. */
    public sealed interface Allow permits FromOrTo, ToNamedPort {
    }

    /** Packets whose other end {@code peer} matches, on one of {@code ports} (none: any packet). */
    public record FromOrTo(Peer peer, List<PortRange> ports) implements Allow {
        public FromOrTo {
            ports = List.copyOf(ports);
        }
    }

    /** Egress to a named port: the destination's (address, protocol, port) is in the family's port set. */
    public record ToNamedPort(String set4, String set6) implements Allow {
    }

    /** The other end of a packet, as a chain matches it. */
    public sealed interface Peer permits AnyPeer, SetPeer, BlockPeer {
    }

    /** Any address. */
    public record AnyPeer() implements Peer {
    }

    /** The addresses of the family's set. */
    public record SetPeer(String set4, String set6) implements Peer {
    }

    /** An ipBlock (one family: its cidr's). */
    public record BlockPeer(PolicyPeer.IpBlock block) implements Peer {
    }

    /** A protocol's ports {@code from}..{@code to}. */
    public record PortRange(Protocol protocol, int from, int to) {
        public PortRange {
            if (from < 1 || to > 65535 || from > to) {
                throw new IllegalArgumentException("port range: expected 1 <= from <= to <= 65535, got " + from + "-" + to);
            }
        }
    }
}
