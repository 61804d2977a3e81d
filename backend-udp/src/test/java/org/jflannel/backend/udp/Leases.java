package org.jflannel.backend.udp;

import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;

/** Leases as a udp node publishes them: PublicIP only, empty BackendType, no backend data. */
final class Leases {
    private Leases() {
    }

    static Lease udp(String subnet, String publicIp) {
        return new Lease(Ip4Net.parse(subnet), null,
                new LeaseAttrs(publicIp == null ? null : Ip4Net.toInet(Ip4Net.parseAddress(publicIp)), null, "", null, null), null);
    }
}
