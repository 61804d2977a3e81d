package org.jflannel.backend.udp;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.TreeMap;
import org.jflannel.core.Ip4Net;

/**
 * An immutable snapshot of the peers, built once per lease batch and read without locks by both
 * packet paths. Destination lookup is longest-prefix match (one sorted array per prefix length
 * present, longest first, binary search: no allocation per packet); sender lookup finds the peers
 * published with a public IP, to check a datagram's inner source against their subnets.
 */
final class PeerTable {
    static final PeerTable EMPTY = of(List.of());

    /** Prefix lengths present, longest first; per length the sorted network addresses and their peers. */
    private final int[] lengths;
    private final int[][] networks;
    private final Peer[][] byNetwork;
    /** Peers sorted by public IP, with that IP alongside. */
    private final int[] senders;
    private final Peer[] bySender;

    private PeerTable(int[] lengths, int[][] networks, Peer[][] byNetwork, int[] senders, Peer[] bySender) {
        this.lengths = lengths;
        this.networks = networks;
        this.byNetwork = byNetwork;
        this.senders = senders;
        this.bySender = bySender;
    }

    /** A table of {@code peers}; a later peer with the same subnet replaces an earlier one. */
    static PeerTable of(Collection<Peer> peers) {
        TreeMap<Integer, TreeMap<Integer, Peer>> byLength = new TreeMap<>(Comparator.reverseOrder());
        for (Peer p : peers) {
            byLength.computeIfAbsent(p.subnet().prefixLength(), k -> new TreeMap<>()).put(p.subnet().address(), p);
        }
        int n = byLength.size();
        int[] lengths = new int[n];
        int[][] networks = new int[n][];
        Peer[][] byNetwork = new Peer[n][];
        List<Peer> all = new ArrayList<>();
        int i = 0;
        for (var e : byLength.entrySet()) {
            lengths[i] = e.getKey();
            networks[i] = e.getValue().keySet().stream().mapToInt(Integer::intValue).toArray(); // TreeMap order = signed order
            byNetwork[i] = e.getValue().values().toArray(new Peer[0]);
            all.addAll(e.getValue().values());
            i++;
        }
        all.sort(Comparator.comparingInt(Peer::publicIp));
        int[] senders = all.stream().mapToInt(Peer::publicIp).toArray();
        return new PeerTable(lengths, networks, byNetwork, senders, all.toArray(new Peer[0]));
    }

    /** The peer whose subnet most specifically contains {@code destination}, or null. */
    Peer route(int destination) {
        for (int i = 0; i < lengths.length; i++) {
            int at = Arrays.binarySearch(networks[i], destination & Ip4Net.mask(lengths[i]));
            if (at >= 0) {
                return byNetwork[i][at];
            }
        }
        return null;
    }

    /** True when some peer publishes {@code sender} as its public IP. */
    boolean knowsSender(int sender) {
        return Arrays.binarySearch(senders, sender) >= 0;
    }

    /** True when {@code source} lies in the subnet of a peer published with public IP {@code sender}. */
    boolean allows(int sender, int source) {
        int at = Arrays.binarySearch(senders, sender);
        if (at < 0) {
            return false;
        }
        while (at > 0 && senders[at - 1] == sender) {
            at--;
        }
        for (; at < senders.length && senders[at] == sender; at++) {
            if (bySender[at].subnet().contains(source)) {
                return true;
            }
        }
        return false;
    }

    int size() {
        return bySender.length;
    }
}
