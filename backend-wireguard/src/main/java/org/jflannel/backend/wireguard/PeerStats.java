package org.jflannel.backend.wireguard;

import java.time.Instant;
import java.util.Objects;
import java.util.Optional;
import org.jflannel.backend.wireguard.protocol.Endpoint;

/**
 * One peer of a device as {@code wg show} describes it, for metrics: its public key (base64), its endpoint (null
 * before it has one), the wall-clock time of its last completed handshake (epoch nanos, {@link #NEVER} before the
 * first) and the bytes received from and sent to it.
 *
 * <p>The bytes are the UDP payload of the messages exchanged with the peer, as the kernel counts them (its
 * {@code rx_bytes}, {@code tx_bytes}): handshake initiations and responses, data and keepalives (header, padded
 * payload and tag); cookie replies are no peer's. Our userspace device counts the same: sent when the socket took
 * them, received once authenticated (data also inside the replay window).
 */
public record PeerStats(String publicKey, Endpoint endpoint, long lastHandshakeEpochNanos, long rxBytes, long txBytes) {
    /** {@link #lastHandshakeEpochNanos} of a peer without a completed handshake. */
    public static final long NEVER = 0;

    public PeerStats {
        Objects.requireNonNull(publicKey, "publicKey");
        if (publicKey.length() != 44) {
            throw new IllegalArgumentException("wireguard peer public key: expected 44 base64 characters, got " + publicKey.length());
        }
    }

    /** When the last handshake completed, empty before the first. */
    public Optional<Instant> lastHandshake() {
        return lastHandshakeEpochNanos == NEVER ? Optional.empty()
                : Optional.of(Instant.ofEpochSecond(0, lastHandshakeEpochNanos));
    }
}
