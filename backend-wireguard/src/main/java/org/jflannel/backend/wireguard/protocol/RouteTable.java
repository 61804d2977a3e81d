package org.jflannel.backend.wireguard.protocol;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.TreeMap;

/**
 * Cryptokey routing's lookup (whitepaper §2), longest prefix first: per address family, one hash table per
 * distinct prefix length, from the longest length down, keyed by the address masked to that length. A lookup
 * costs one probe per distinct length (a flannel cluster's peers all have their lease's length: one), whatever
 * the number of peers, and allocates nothing: it runs for every packet received (the source check) and every
 * TUN read. Immutable: {@link Peers} builds a new one on each change and the packet threads read it without a
 * lock. The kernel's WireGuard uses a bit trie for the same answer; with the few lengths cryptokey routing
 * sees here a table per length is shorter to walk.
 *
 * <p>Open addressing with linear probing over arrays of at most twice the entries, rounded up to a power of
 * two. A prefix given to two peers goes to the first one built (cryptokey routing gives a prefix to one peer:
 * the caller's order decides, as before this table).
 */
final class RouteTable {
    static final RouteTable EMPTY = build(List.of());

    /** Prefix lengths, longest first, and the table of each. */
    private final int[] lengths4;
    private final Table[] tables4;
    private final int[] lengths6;
    private final Table[] tables6;

    private RouteTable(int[] lengths4, Table[] tables4, int[] lengths6, Table[] tables6) {
        this.lengths4 = lengths4;
        this.tables4 = tables4;
        this.lengths6 = lengths6;
        this.tables6 = tables6;
    }

    /** One prefix of one peer. */
    record Route(AllowedIp prefix, Peer peer) {
    }

    static RouteTable build(Collection<Route> routes) {
        TreeMap<Integer, List<Route>> v4 = new TreeMap<>((a, b) -> Integer.compare(b, a));
        TreeMap<Integer, List<Route>> v6 = new TreeMap<>((a, b) -> Integer.compare(b, a));
        for (Route r : routes) {
            (r.prefix().ipv6() ? v6 : v4).computeIfAbsent(r.prefix().prefixLength(), k -> new ArrayList<>()).add(r);
        }
        int[] l4 = v4.keySet().stream().mapToInt(Integer::intValue).toArray();
        int[] l6 = v6.keySet().stream().mapToInt(Integer::intValue).toArray();
        return new RouteTable(l4, v4.values().stream().map(Table::of).toArray(Table[]::new),
                l6, v6.values().stream().map(Table::of).toArray(Table[]::new));
    }

    /** The peer whose IPv4 allowed IPs hold {@code ip}, longest prefix first; null when none. */
    Peer route(int ip) {
        for (int k = 0; k < lengths4.length; k++) {
            Peer p = tables4[k].get(0, ip & AllowedIp.mask(lengths4[k]) & 0xffffffffL);
            if (p != null) {
                return p;
            }
        }
        return null;
    }

    /** The peer whose IPv6 allowed IPs hold {@code high:low}, longest prefix first; null when none. */
    Peer route6(long high, long low) {
        for (int k = 0; k < lengths6.length; k++) {
            int len = lengths6[k];
            Peer p = tables6[k].get(high & AllowedIp.highMask(len), low & AllowedIp.lowMask(len));
            if (p != null) {
                return p;
            }
        }
        return null;
    }

    /** The prefixes of one length: keys (the masked address: IPv4 in {@code low}, {@code high} 0) to peers. */
    private static final class Table {
        private final long[] highs;
        private final long[] lows;
        private final Peer[] peers;
        private final int mask;

        private Table(int slots) {
            highs = new long[slots];
            lows = new long[slots];
            peers = new Peer[slots];
            mask = slots - 1;
        }

        static Table of(List<Route> routes) {
            Table t = new Table(Integer.highestOneBit(Math.max(1, routes.size()) * 2 - 1) << 1);
            for (Route r : routes) {
                t.putIfAbsent(r.prefix().high(), r.prefix().low(), r.peer());
            }
            return t;
        }

        private static int hash(long high, long low) {
            long h = (high * 0x9E3779B97F4A7C15L) ^ (low * 0xC2B2AE3D27D4EB4FL);
            return (int) (h ^ (h >>> 29) ^ (h >>> 43));
        }

        private void putIfAbsent(long high, long low, Peer p) {
            for (int i = hash(high, low) & mask; ; i = (i + 1) & mask) {
                if (peers[i] == null) {
                    highs[i] = high;
                    lows[i] = low;
                    peers[i] = p;
                    return;
                }
                if (highs[i] == high && lows[i] == low) {
                    return;
                }
            }
        }

        Peer get(long high, long low) {
            for (int i = hash(high, low) & mask; ; i = (i + 1) & mask) {
                Peer p = peers[i];
                if (p == null || (highs[i] == high && lows[i] == low)) {
                    return p;
                }
            }
        }
    }
}
