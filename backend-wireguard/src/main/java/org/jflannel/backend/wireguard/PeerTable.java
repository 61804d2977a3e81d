package org.jflannel.backend.wireguard;

import java.io.IOException;
import java.util.List;
import org.jflannel.backend.wireguard.protocol.AllowedIp;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.backend.wireguard.protocol.Peer;

/**
 * A WireGuard device's peer table, as {@link WireguardPeers} writes it: our userspace {@link Device}'s
 * ({@link #userspace}), or the kernel's through generic netlink ({@link KernelDevice}).
 */
interface PeerTable {
    /**
     * Adds the peer, or updates the one with this key (its sessions kept; the allowed IPs replaced). An
     * {@link IllegalArgumentException} for a key the device refuses, an {@link IOException} when the
     * kernel refuses the request.
     */
    void setPeer(byte[] publicKey, byte[] psk, Endpoint endpoint, List<AllowedIp> allowedIps, int keepaliveSeconds)
            throws IOException;

    /** Removes the peer with this key, its sessions and allowed IPs; quiet when there is none. */
    void removePeer(byte[] publicKey) throws IOException;

    /** How many peers the table holds. */
    int peers();

    /**
     * Each peer's endpoint, last handshake and bytes, read now (kernel: one {@code WG_CMD_GET_DEVICE} dump); an
     * {@link IOException} when the kernel cannot be read.
     */
    List<PeerStats> stats() throws IOException;

    /** Our userspace device's table. */
    static PeerTable userspace(Device device) {
        return new PeerTable() {
            @Override
            public void setPeer(byte[] publicKey, byte[] psk, Endpoint endpoint, List<AllowedIp> allowedIps, int keepaliveSeconds) {
                boolean known = device.peer(publicKey).isPresent();
                Peer p = device.setPeer(publicKey, psk, endpoint, allowedIps, keepaliveSeconds);
                if (!known) {
                    device.initiateHandshake(p); // a restarted node is reached again at once, not after the peer's 15 s
                }
            }

            @Override
            public void removePeer(byte[] publicKey) {
                device.removePeer(publicKey);
            }

            @Override
            public int peers() {
                return device.peers().size();
            }

            @Override
            public List<PeerStats> stats() {
                return device.peers().stream().map(p -> new PeerStats(java.util.Base64.getEncoder().encodeToString(p.publicKey()), p.endpoint(), p.lastHandshakeEpochNanos(),
                        p.rxBytes(), p.txBytes())).toList();
            }
        };
    }
}
