package org.jflannel.backend.wireguard;

import java.util.List;
import java.util.Objects;
import org.jflannel.backend.wireguard.protocol.AllowedIp;
import org.jflannel.backend.wireguard.protocol.Endpoint;

/**
 * One row of a device's peer table as a lease asks for it (upstream's {@code addPeer}): the device
 * ({@code flannel-wg}, or {@code flannel-wg-v6} in separate mode), the peer's public key, its
 * endpoint {@code PublicIP:Port} or {@code [PublicIPv6]:Port}, its allowed IPs (the lease's
 * subnet(s): the cryptokey routes to it) and the persistent keepalive. The pre-shared key is the
 * network's, the same for every peer, and is kept out of the row (rows are logged). The key is held
 * in base64, so rows compare by value.
 */
record WgPeer(String device, String publicKey, Endpoint endpoint, List<AllowedIp> allowedIps, int keepaliveSeconds) {
    WgPeer {
        Objects.requireNonNull(device, "device");
        Objects.requireNonNull(publicKey, "publicKey");
        Objects.requireNonNull(endpoint, "endpoint");
        allowedIps = List.copyOf(allowedIps);
        if (keepaliveSeconds < 0) {
            throw new IllegalArgumentException("keepaliveSeconds must be >= 0, got " + keepaliveSeconds);
        }
    }

    byte[] key() {
        return java.util.Base64.getDecoder().decode(publicKey);
    }
}
