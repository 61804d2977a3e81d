package org.jflannel.linuxnet.netlink;

import java.net.InetSocketAddress;
import java.util.List;
import java.util.Objects;

/**
 * One peer of a kernel WireGuard device as {@code WG_CMD_GET_DEVICE} reports it (what {@code wg show dump}
 * prints): its public key (base64, as wg prints it), its endpoint (null before it has one), the wall-clock time of
 * its last completed handshake (epoch nanos, {@link #NEVER} before the first), the bytes the kernel counted
 * from and to it (the UDP payloads of every message: handshakes, data, keepalives; unsigned 64-bit), its persistent
 * keepalive (0: off) and allowed IPs. The preshared key is not kept: nothing here needs it, and a secret
 * held is a secret that can leak.
 */
public record WireguardPeerState(String publicKey, InetSocketAddress endpoint, long lastHandshakeEpochNanos, long rxBytes,
        long txBytes, int keepaliveSeconds, List<IpPrefix> allowedIps) {
    /** {@link #lastHandshakeEpochNanos} of a peer that never completed a handshake (the kernel reports 0 s 0 ns). */
    public static final long NEVER = 0;

    public WireguardPeerState {
        Objects.requireNonNull(publicKey, "publicKey");
        if (publicKey.length() != 44) {
            throw new IllegalArgumentException("wireguard peer public key: expected 44 base64 characters, got " + publicKey.length());
        }
        if (keepaliveSeconds < 0 || keepaliveSeconds > 65535) {
            throw new IllegalArgumentException("wireguard persistent keepalive: expected 0..65535, got " + keepaliveSeconds);
        }
        allowedIps = List.copyOf(allowedIps);
    }
}
