package org.jflannel.backend.udp;

import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;

/** Leases as a udp node publishes them: PublicIP only, empty BackendType, no backend data. */
final class Leases {
    private Leases() {
    }

    /** The lease of a node that published {@code attrs} (e.g. with the kernel datapath's backend data). */
    static Lease published(String subnet, LeaseAttrs attrs) {
        return new Lease(Ip4Net.parse(subnet), null, attrs, null);
    }

    static Lease udp(String subnet, String publicIp) {
        return new Lease(Ip4Net.parse(subnet), null,
                new LeaseAttrs(publicIp == null ? null : Ip4Net.toInet(Ip4Net.parseAddress(publicIp)), null, "", null, null), null);
    }
}
