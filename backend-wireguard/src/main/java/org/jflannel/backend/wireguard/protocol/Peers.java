package org.jflannel.backend.wireguard.protocol;

import java.util.ArrayList;
import java.util.Base64;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.jflannel.backend.wireguard.crypto.X25519;

/**
 * The device's peers by public key, and cryptokey routing (whitepaper §2): the allowed IPs of every
 * peer as one array, longest prefix first, rebuilt on each change and read without a lock by the
 * packet threads.
 */
final class Peers {
    private record Route(AllowedIp prefix, Peer peer) {
    }

    private final byte[] privateKey;
    private final Timings timings;
    private final Counters counters;
    private final Sessions sessions;
    private final Map<String, Peer> peers = new ConcurrentHashMap<>();
    private volatile Route[] routes = new Route[0];

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

    private void rebuildRoutes() {
        List<Route> r = new ArrayList<>();
        for (Peer p : peers.values()) {
            for (AllowedIp a : p.allowedIps) {
                r.add(new Route(a, p));
            }
        }
        r.sort(Comparator.comparingInt((Route x) -> x.prefix.prefixLength()).reversed());
        routes = r.toArray(new Route[0]);
    }

    /** The peer whose allowed IPs hold {@code ip}, longest prefix first. */
    Peer route(int ip) {
        for (Route r : routes) {
            if (r.prefix.contains(ip)) {
                return r.peer;
            }
        }
        return null;
    }

    /** The peer a TUN packet goes to (IPv4 destination), or null (counted). */
    Peer peerForPacket(byte[] packet, int off, int len) {
        if (len < 20 || (packet[off] & 0xf0) != 0x40) {
            counters.droppedNoPeer.increment();
            return null;
        }
        int dst = (packet[off + 16] & 0xff) << 24 | (packet[off + 17] & 0xff) << 16 | (packet[off + 18] & 0xff) << 8 | (packet[off + 19] & 0xff);
        Peer p = route(dst);
        if (p == null) {
            counters.droppedNoPeer.increment();
        }
        return p;
    }
}
