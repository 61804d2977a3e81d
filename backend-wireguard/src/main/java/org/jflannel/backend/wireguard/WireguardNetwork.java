package org.jflannel.backend.wireguard;

import org.jflannel.backend.wireguard.protocol.Counters;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.Lease;
import org.jflannel.core.peers.LoopCounters;
import org.jflannel.core.peers.PeerNetwork;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registered wireguard network: its peers kept by the backends' one loop ({@link PeerNetwork} over
 * {@link WireguardPeers}, the peer table of our userspace {@link Device}), and the packet threads
 * ({@link Dataplane}) that own {@code flannel-wg} and the socket, closed with it.
 */
public final class WireguardNetwork extends PeerNetwork<WgPeer> {
    private static final Logger LOG = LoggerFactory.getLogger(WireguardNetwork.class);

    private final Device device;
    private volatile boolean closed;

    /** @param plane the packet threads, closed with this (null: none, in tests) */
    WireguardNetwork(Lease lease, int mtu, BackendConfig.Wireguard cfg, Device device, Dataplane plane) {
        super(WireguardPeers.TYPE, lease, mtu, new WireguardPeers(device, cfg), LoopCounters.NONE, () -> {
            if (plane != null) {
                plane.close();
            }
        });
        this.device = device;
    }

    public String deviceName() {
        return WireguardBackend.DEVICE;
    }

    public byte[] publicKey() {
        return device.publicKey();
    }

    public Counters counters() {
        return device.counters();
    }

    /** Peers in the device (a key it refused is not one). */
    @Override
    public int peers() {
        return device.peers().size();
    }

    /** The protocol device, for tests and metrics. */
    public Device device() {
        return device;
    }

    /** Stops the loop, then the packet threads: flannel-wg and its route go with the TUN. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        super.close();
        LOG.info("wireguard network closed dev={} {}", WireguardBackend.DEVICE, device.counters());
    }
}
