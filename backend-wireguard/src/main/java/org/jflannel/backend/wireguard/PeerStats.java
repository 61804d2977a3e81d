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
 * <p>What the bytes are differs a little between the data planes. The kernel counts the UDP payload of every
 * message it exchanged with the peer: handshake initiations and responses, data and keepalives. Our userspace
 * device counts transport data messages only (data and keepalives: header, padded payload and tag, so the same
 * bytes for those), sent when the socket took them and received once authenticated and inside the replay
 * window; it leaves out the handshake messages (148 + 92 bytes per handshake, one every two minutes while
 * traffic flows) and cookie replies.
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
