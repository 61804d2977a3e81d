package org.jflannel.backend.wireguard.protocol;

import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jflannel.backend.wireguard.crypto.X25519;

/**
 * The device's peers by public key, and cryptokey routing (whitepaper §2): the allowed IPs of every
 * peer in a {@link RouteTable}, rebuilt on each change and read without a lock by the packet threads.
 */
final class Peers {
    private final byte[] privateKey;
    private final Timings timings;
    private final Counters counters;
    private final Sessions sessions;
    private final Map<String, Peer> peers = new ConcurrentHashMap<>();
    private volatile RouteTable routes = RouteTable.EMPTY;

    Peers(byte[] privateKey, Timings timings, Counters counters, Sessions sessions) {
        this.privateKey = privateKey;
        this.timings = timings;
        this.counters = counters;
        this.sessions = sessions;
    }

    /**
     * Adds a peer or updates one with this key (its sessions kept, as {@code wg set} does);
     * {@code firstKeepalive} runs, holding the peer, when its persistent keepalive was just turned on.
     */
    Peer set(byte[] peerPublic, byte[] psk, Endpoint endpoint, List<AllowedIp> allowedIps, int keepaliveSeconds,
            Consumer<Peer> firstKeepalive) {
        String key = Base64.getEncoder().encodeToString(peerPublic);
        Peer p = peers.computeIfAbsent(key, k -> new Peer(peerPublic,
                X25519.dh(privateKey, peerPublic).orElseThrow(() -> new IllegalArgumentException("peer public key has small order: " + k)),
                timings.cookieRefreshTime().toNanos() - timings.rekeyTimeout().toNanos()));
        synchronized (p) {
            p.psk = psk == null ? null : psk.clone();
            if (endpoint != null) {
                p.endpoint = endpoint;
            }
            p.allowedIps = List.copyOf(allowedIps);
            boolean keepaliveTurnedOn = p.persistentKeepaliveSeconds == 0 && keepaliveSeconds > 0;
            p.persistentKeepaliveSeconds = keepaliveSeconds;
            if (keepaliveTurnedOn) {
                // as wireguard-go: a keepalive right away, which also brings the session up
                firstKeepalive.accept(p);
            }
        }
        rebuildRoutes();
        return p;
    }

    /** The peer with this public key, or null. */
    Peer get(byte[] peerPublic) {
        return peers.get(Base64.getEncoder().encodeToString(peerPublic));
    }

    /** The peers, live (a view of the map). */
    Collection<Peer> live() {
        return peers.values();
    }

    /** Removes the peer: its sessions are wiped, its staged packets dropped, its allowed IPs freed. */
    void remove(byte[] peerPublic) {
        Peer p = peers.remove(Base64.getEncoder().encodeToString(peerPublic));
        if (p != null) {
            synchronized (p) {
                sessions.zeroKeys(p);
                p.staged.clear();
            }
            rebuildRoutes();
        }
    }

    private synchronized void rebuildRoutes() { // one at a time: the last change's rebuild sees it
        List<RouteTable.Route> all = new ArrayList<>();
        for (Peer p : peers.values()) {
            for (AllowedIp a : p.allowedIps) {
                all.add(new RouteTable.Route(a, p));
            }
        }
        routes = RouteTable.build(all);
    }

    /** The peer whose IPv4 allowed IPs hold {@code ip}, longest prefix first. */
    Peer route(int ip) {
        return routes.route(ip);
    }

    /** The peer whose IPv6 allowed IPs hold {@code high:low}, longest prefix first. */
    Peer route6(long high, long low) {
        return routes.route6(high, low);
    }

    /** The peer an IP packet's address at {@code at} (4 bytes for version 4, 16 for 6) routes to, or null. */
    Peer routeAddress(byte[] packet, int at, boolean ipv6) {
        if (!ipv6) {
            return route((packet[at] & 0xff) << 24 | (packet[at + 1] & 0xff) << 16 | (packet[at + 2] & 0xff) << 8
                    | (packet[at + 3] & 0xff));
        }
        return route6(longAt(packet, at), longAt(packet, at + 8));
    }

    static long longAt(byte[] b, int at) {
        long v = 0;
        for (int i = 0; i < 8; i++) {
            v = v << 8 | (b[at + i] & 0xff);
        }
        return v;
    }

    /** The peer a TUN packet goes to (IPv4 or IPv6 destination), or null (counted). */
    Peer peerForPacket(byte[] packet, int off, int len) {
        int version = len > 0 ? (packet[off] & 0xf0) : 0;
        Peer p = null;
        if (version == 0x40 && len >= 20) {
            p = routeAddress(packet, off + 16, false);
        } else if (version == 0x60 && len >= 40) {
            p = routeAddress(packet, off + 24, true);
        }
        if (p == null) {
            counters.droppedNoPeer.increment();
        }
        return p;
    }
}
