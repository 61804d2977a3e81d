package org.jflannel.backend.ipsec;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;

/** Leases for tests: an ipsec lease as upstream publishes it (public IP, BackendType, no data). */
final class Leases {
    private Leases() {
    }

    static Lease lease(String subnet, String publicIp) {
        return lease(subnet, publicIp, IpsecPlanner.TYPE);
    }

    static Lease lease(String subnet, String publicIp, String type) {
        try {
            return new Lease(Ip4Net.parse(subnet), null,
                    new LeaseAttrs((Inet4Address) InetAddress.getByName(publicIp), null, type, null, null), null);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(e);
        }
    }
}
