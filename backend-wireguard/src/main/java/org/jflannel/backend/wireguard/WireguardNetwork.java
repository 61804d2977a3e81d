package org.jflannel.backend.wireguard;

import java.util.List;
import org.jflannel.backend.wireguard.protocol.Counters;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.core.Lease;
import org.jflannel.core.peers.LoopCounters;
import org.jflannel.core.peers.PeerNetwork;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registered wireguard network: its peers kept by the backends' one loop ({@link PeerNetwork} over
 * {@link WireguardPeers}, the peer tables of our userspace {@link Device}s), and per device the packet
 * threads ({@link Dataplane}) that own it and its socket, closed with it. One device ({@code flannel-wg}),
 * or two in separate mode with both families ({@code flannel-wg-v6} too).
 */
public final class WireguardNetwork extends PeerNetwork<WgPeer> {
    private static final Logger LOG = LoggerFactory.getLogger(WireguardNetwork.class);

    /** One device: its name, the protocol, and its packet threads (null in tests). */
    record Plane(String name, Device device, Dataplane dataplane) {
    }

    private final List<Plane> planes;
    private volatile boolean closed;

    WireguardNetwork(Lease lease, int mtu, WireguardPeers peers, List<Plane> planes) {
        super(WireguardPeers.TYPE, lease, mtu, peers, LoopCounters.NONE, () -> {
            for (Plane p : planes) {
                if (p.dataplane() != null) {
                    p.dataplane().close();
                }
            }
        });
        this.planes = List.copyOf(planes);
    }

    /** The first device's name: {@code flannel-wg}, or {@code flannel-wg-v6} in an IPv6-only separate network. */
    public String deviceName() {
        return planes.get(0).name();
    }

    /** The devices' names, {@code flannel-wg} first. */
    public List<String> deviceNames() {
        return planes.stream().map(Plane::name).toList();
    }

    /** Our public key (every device has the one key of the key file, as upstream's). */
    public byte[] publicKey() {
        return planes.get(0).device().publicKey();
    }

    /** The first device's counters (see {@link #allCounters}). */
    public Counters counters() {
        return planes.get(0).device().counters();
    }

    /** Each device's counters, in {@link #deviceNames} order. */
    public List<Counters> allCounters() {
        return planes.stream().map(p -> p.device().counters()).toList();
    }

    /** Peers in the devices (a key a device refused is not one; a peer on both devices counts twice). */
    @Override
    public int peers() {
        return planes.stream().mapToInt(p -> p.device().peers().size()).sum();
    }

    /** The first device's protocol, for tests and metrics. */
    public Device device() {
        return planes.get(0).device();
    }

    /** The protocol of the device named {@code name}, for tests. */
    public Device device(String name) {
        return planes.stream().filter(p -> p.name().equals(name)).findFirst().map(Plane::device)
                .orElseThrow(() -> new IllegalArgumentException("no wireguard device " + name));
    }

    /** Stops the loop, then the packet threads: the devices and their routes go with the TUNs. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        super.close();
        for (Plane p : planes) {
            LOG.info("wireguard network closed dev={} {}", p.name(), p.device().counters());
        }
    }
}
