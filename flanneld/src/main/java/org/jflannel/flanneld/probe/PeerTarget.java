package org.jflannel.flanneld.probe;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.Inet4Address;
import java.util.Iterator;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.MacAddress;

/**
 * What the prober needs of one peer's lease: where to probe through the overlay (the peer's subnet
 * address, which its {@code flannel.1} or {@code flannel0} carries as /32), where through the
 * underlay (its public IP), and, for VXLAN, the VTEP MAC it published.
 *
 * @param key     the lease's key, {@code peer} the public IP and {@code subnet} the subnet as text: computed
 *                once, since the probe loop needs them for every round
 * @param vtepMac null for backends without one (udp) or when the lease's data has none
 */
record PeerTarget(Lease lease, String key, String peer, String subnet, Inet4Address overlay, Inet4Address underlay,
                  MacAddress vtepMac) {
    private static final ObjectMapper JSON = new ObjectMapper();

    PeerTarget {
        Objects.requireNonNull(lease, "lease");
        Objects.requireNonNull(overlay, "overlay");
        Objects.requireNonNull(underlay, "underlay");
    }

    /** Empty for a lease we cannot probe over IPv4 (IPv6-only, no public IP). */
    static Optional<PeerTarget> of(Lease lease) {
        return of(lease, false);
    }

    /**
     * {@code hostGw}: the overlay target is the subnet's first address (the peer's {@code cni0}), not its network
     * address, which on host-gw no device of the peer carries; a /31 or /32 subnet has no such address: not probed.
     */
    static Optional<PeerTarget> of(Lease lease, boolean hostGw) {
        if (lease.subnet() == null || lease.attrs().publicIp() == null) {
            return Optional.empty();
        }
        Inet4Address overlay = lease.subnet().inetAddress();
        if (hostGw) {
            if (lease.subnet().prefixLength() > 30) {
                return Optional.empty();
            }
            overlay = Ip4Net.toInet(lease.subnet().address() + 1);
        }
        return Optional.of(new PeerTarget(lease, lease.key(), lease.attrs().publicIp().getHostAddress(),
                lease.subnet().toString(), overlay, lease.attrs().publicIp(),
                vtepMac(lease.attrs().backendData())));
    }

    /**
     * {@code VtepMAC} of the backend data, keys matched case-insensitively as Go does; null when
     * absent or unreadable (the backend itself logs bad data, the prober just skips the MAC check).
     */
    static MacAddress vtepMac(String backendData) {
        if (backendData == null || backendData.isBlank()) {
            return null;
        }
        try {
            JsonNode root = JSON.readTree(backendData);
            for (Iterator<Map.Entry<String, JsonNode>> it = root.fields(); it.hasNext(); ) {
                Map.Entry<String, JsonNode> e = it.next();
                if (e.getKey().equalsIgnoreCase("VtepMAC") && e.getValue().isTextual()) {
                    return MacAddress.parse(e.getValue().textValue());
                }
            }
        } catch (java.io.IOException | RuntimeException e) {
            return null;
        }
        return null;
    }
}
