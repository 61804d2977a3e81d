package org.jflannel.backend.wireguard;

import java.io.IOException;
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
 * {@link WireguardPeers}, the devices' peer tables), and per device what owns it, closed with it: in
 * userspace the packet threads ({@link Dataplane}) with the TUN and socket, in kernel mode the
 * {@link KernelDevice}. One device ({@code flannel-wg}), or two in separate mode with both families
 * ({@code flannel-wg-v6} too).
 */
public final class WireguardNetwork extends PeerNetwork<WgPeer> {
    private static final Logger LOG = LoggerFactory.getLogger(WireguardNetwork.class);

    /**
     * One device: its name, its peer table, our protocol (null in kernel mode) and what owns the device
     * (the packet threads or the kernel device; null in tests).
     */
    record Plane(String name, PeerTable table, Device device, AutoCloseable owner) {
        /** A userspace device: the table is the protocol's. */
        static Plane userspace(String name, Device device, Dataplane dataplane) {
            return new Plane(name, PeerTable.userspace(device), device, dataplane);
        }

        static Plane kernel(KernelDevice device) {
            return new Plane(device.name(), device, null, device);
        }
    }

    private final List<Plane> planes;
    private final byte[] publicKey;
    private volatile boolean closed;

    WireguardNetwork(Lease lease, int mtu, byte[] publicKey, WireguardPeers peers, List<Plane> planes) {
        super(WireguardPeers.TYPE, lease, mtu, peers, LoopCounters.NONE, () -> {
            for (Plane p : planes) {
                if (p.owner() != null) {
                    try {
                        p.owner().close();
                    } catch (Exception e) {
                        LOG.warn("wireguard device close failed dev={} error={}", p.name(), e.toString());
                    }
                }
            }
        });
        this.planes = List.copyOf(planes);
        this.publicKey = publicKey.clone();
    }

    /** True when the kernel runs the devices (kernel mode), false when this process does (userspace). */
    public boolean kernelMode() {
        return planes.get(0).device() == null;
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
        return publicKey.clone();
    }

    /** The first device's counters (see {@link #allCounters}); all zero in kernel mode (the kernel's are its own). */
    public Counters counters() {
        return allCounters().get(0);
    }

    /** Each device's counters, in {@link #deviceNames} order; all zero in kernel mode. */
    public List<Counters> allCounters() {
        return planes.stream().map(p -> p.device() != null ? p.device().counters() : new Counters()).toList();
    }

    /** Peers in the devices (a key a device refused is not one; a peer on both devices counts twice). */
    @Override
    public int peers() {
        return planes.stream().mapToInt(p -> p.table().peers()).sum();
    }

    /**
     * The peers of the device named {@code name} ({@link #deviceNames}) with their endpoints, last handshakes and
     * bytes, read now: from the kernel in kernel mode (an {@link IOException} when it cannot be read), from our
     * protocol in userspace.
     */
    public List<PeerStats> peerStats(String name) throws IOException {
        return planes.stream().filter(p -> p.name().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalArgumentException("no wireguard device " + name)).table().stats();
    }

    /** The first device's protocol, for tests and metrics; null in kernel mode. */
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
            LOG.info("wireguard network closed dev={} {}", p.name(), p.device() != null ? p.device().counters() : "dataplane=kernel");
        }
    }
}
