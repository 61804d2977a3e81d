package org.jflannel.backend.wireguard;

import java.util.List;
import org.jflannel.backend.wireguard.protocol.AllowedIp;
import org.jflannel.backend.wireguard.protocol.Counters;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Network;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Peers from leases (upstream's {@code handleSubnetEvents}): for each wireguard lease, the public
 * key of its backend data, endpoint {@code PublicIP:Port} (the lease's Port, our ListenPort when it
 * has none), allowed IPs = its subnet, our PSK and keepalive. Added without disturbing the others;
 * removed when the lease goes (its sessions are wiped, so its traffic is dropped from then on).
 */
public final class WireguardNetwork implements Network {
    private static final Logger LOG = LoggerFactory.getLogger(WireguardNetwork.class);

    private final Lease lease;
    private final int mtu;
    private final BackendConfig.Wireguard cfg;
    private final Device device;
    private final Dataplane plane;
    private volatile boolean closed;
    /** Lease key → the public key we run its peer under: a lease whose key changed (node restarted without its key file) replaces its peer. */
    private final java.util.Map<String, byte[]> keyOfLease = new java.util.HashMap<>();

    WireguardNetwork(Lease lease, int mtu, BackendConfig.Wireguard cfg, Device device, Dataplane plane) {
        this.lease = lease;
        this.mtu = mtu;
        this.cfg = cfg;
        this.device = device;
        this.plane = plane;
    }

    @Override
    public Lease lease() {
        return lease;
    }

    @Override
    public int mtu() {
        return mtu;
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

    public int peers() {
        return device.peers().size();
    }

    /** The protocol device, for tests and metrics. */
    public Device device() {
        return device;
    }

    @Override
    public void apply(List<LeaseEvent> batch) {
        if (closed) {
            return;
        }
        for (LeaseEvent e : batch) {
            Lease l = e.lease();
            if (!"wireguard".equals(l.attrs().backendType())) {
                LOG.info("wireguard ignoring lease of another backend lease={} type={}", l.key(), l.attrs().backendType());
                continue;
            }
            var data = WireguardLeaseData.parse(l.attrs().backendData());
            if (data.isEmpty() || l.subnet() == null || l.attrs().publicIp() == null) {
                LOG.warn("wireguard lease without a usable PublicKey or IPv4 lease={} data={}", l.key(), l.attrs().backendData());
                continue;
            }
            byte[] key = data.get().publicKey();
            try {
                if (e.type() == LeaseEvent.Type.REMOVED) {
                    byte[] known = keyOfLease.remove(l.key());
                    device.removePeer(known != null ? known : key);
                    LOG.info("wireguard peer removed lease={}", l.key());
                } else {
                    byte[] old = keyOfLease.put(l.key(), key);
                    if (old != null && !java.util.Arrays.equals(old, key)) {
                        device.removePeer(old); // its sessions and allowed IPs go; the new key takes the subnet
                        LOG.info("wireguard peer key changed lease={} old={} new={}", l.key(),
                                java.util.Base64.getEncoder().encodeToString(old), java.util.Base64.getEncoder().encodeToString(key));
                    }
                    int port = data.get().port() > 0 ? data.get().port() : cfg.listenPort();
                    Endpoint ep = Endpoint.of(l.attrs().publicIp(), port);
                    device.setPeer(key, cfg.psk(), ep, List.of(new AllowedIp(l.subnet().address(), l.subnet().prefixLength())),
                            (int) cfg.persistentKeepaliveSeconds());
                    LOG.info("wireguard peer set lease={} endpoint={} allowedIps={}", l.key(), ep, l.subnet());
                }
            } catch (IllegalArgumentException ex) {
                LOG.warn("wireguard peer refused lease={} error={}", l.key(), ex.getMessage());
            }
        }
    }

    @Override
    public void reconcile() {
        // no kernel state per peer: the peer table is ours, and flannel-wg with its route goes with the process
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        plane.close();
        LOG.info("wireguard network closed dev={} {}", WireguardBackend.DEVICE, device.counters());
    }
}
