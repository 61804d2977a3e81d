package org.jflannel.backend.wireguard;

import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Optional;
import org.jflannel.backend.wireguard.protocol.AllowedIp;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.Lease;
import org.jflannel.core.peers.LeasePlan;
import org.jflannel.core.peers.OwnTable;
import org.jflannel.core.peers.PeerLoop;
import org.jflannel.core.peers.ReadBack;
import org.jflannel.core.peers.Writing;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wireguard backend's side of the shared {@link PeerLoop}: the peer table of our userspace
 * {@link Device} (upstream's {@code handleSubnetEvents}). A wireguard lease wants one {@link WgPeer}:
 * the public key of its backend data, endpoint {@code PublicIP:Port} (the lease's Port, our ListenPort
 * when it has none), allowed IPs = its subnet, our PSK and keepalive. A peer whose key stays the same is
 * updated in place (its sessions kept, as {@code wg set} does); a new key replaces the peer (node restarted
 * without its key file); a removed lease takes its peer away (sessions wiped, its traffic dropped from then
 * on). The table is ours alone and {@code flannel-wg} with its route goes with the process: nothing to
 * read back or heal.
 */
final class WireguardPeers implements OwnTable<WgPeer> {
    private static final Logger LOG = LoggerFactory.getLogger(WireguardPeers.class);
    static final String TYPE = "wireguard";

    private final Device device;
    private final BackendConfig.Wireguard cfg;

    WireguardPeers(Device device, BackendConfig.Wireguard cfg) {
        this.device = device;
        this.cfg = cfg;
    }

    @Override
    public LeasePlan<WgPeer> plan(Lease lease) {
        if (!TYPE.equals(lease.attrs().backendType())) {
            return LeasePlan.ignored("wireguard ignoring lease of another backend type=" + lease.attrs().backendType());
        }
        Optional<WgPeer> peer = peer(lease);
        if (peer.isEmpty()) {
            return LeasePlan.skipped("wireguard lease without a usable PublicKey or IPv4 data=" + lease.attrs().backendData());
        }
        return LeasePlan.of(lease, List.of(peer.get()));
    }

    /** The row a wireguard lease asks for, if its backend data and addresses are usable. */
    private Optional<WgPeer> peer(Lease l) {
        var data = WireguardLeaseData.parse(l.attrs().backendData());
        if (data.isEmpty() || l.subnet() == null || l.attrs().publicIp() == null) {
            return Optional.empty();
        }
        int port = data.get().port() > 0 ? data.get().port() : cfg.listenPort();
        return Optional.of(new WgPeer(Base64.getEncoder().encodeToString(data.get().publicKey()),
                Endpoint.of(l.attrs().publicIp(), port),
                List.of(new AllowedIp(l.subnet().address(), l.subnet().prefixLength())),
                (int) cfg.persistentKeepaliveSeconds()));
    }

    /** A removal of a lease we hold no row for: the key its data names goes all the same. */
    @Override
    public List<WgPeer> forgotten(Lease lease) {
        return TYPE.equals(lease.attrs().backendType()) ? peer(lease).map(List::of).orElse(List.of()) : List.of();
    }

    @Override
    public String describe(WgPeer p) {
        return "publicKey=" + p.publicKey() + " endpoint=" + p.endpoint() + " allowedIps=" + p.allowedIps()
                + " keepalive=" + p.keepaliveSeconds();
    }

    /** Each peer set on the device; a key the device refuses (small order) is logged and stays out. */
    @Override
    public List<WgPeer> write(List<WgPeer> entries, Writing<WgPeer> how) {
        List<WgPeer> failed = new ArrayList<>();
        for (WgPeer p : entries) {
            if (!set(p)) {
                failed.add(p);
            }
        }
        return failed;
    }

    private boolean set(WgPeer p) {
        try {
            device.setPeer(p.key(), cfg.psk(), p.endpoint(), p.allowedIps(), p.keepaliveSeconds());
            return true;
        } catch (IllegalArgumentException ex) {
            LOG.warn("wireguard peer refused publicKey={} error={}", p.publicKey(), ex.getMessage());
            return false;
        }
    }

    /**
     * A changed lease under the same key: the device updates the peer (endpoint, allowed IPs) and keeps its
     * sessions. A lease that turned unusable leaves its peer as it was (upstream's too: it logs and goes on).
     */
    @Override
    public boolean keepsOnChange(WgPeer stale, List<WgPeer> next) {
        return next.isEmpty() || next.stream().anyMatch(p -> p.publicKey().equals(stale.publicKey()));
    }

    /** Never asked: an own table has nothing missing. */
    @Override
    public boolean repair(ReadBack.Missing<WgPeer> missing, boolean failedBefore) {
        return set(missing.entry());
    }

    @Override
    public void delete(WgPeer p) {
        device.removePeer(p.key()); // its sessions and allowed IPs go
        LOG.info("wireguard peer removed publicKey={}", p.publicKey());
    }
}
