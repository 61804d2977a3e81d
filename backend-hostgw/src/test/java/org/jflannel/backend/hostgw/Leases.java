package org.jflannel.backend.hostgw;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;

/** Builds peer leases for tests, as upstream's host-gw publishes them: type host-gw, no backend data. */
final class Leases {
    private Leases() {
    }

    static Lease v4(String subnet, String publicIp) {
        return new Lease(Ip4Net.parse(subnet), null,
                new LeaseAttrs((Inet4Address) ip(publicIp), null, "host-gw", null, null), null);
    }

    static Lease typed(String subnet, String publicIp, String type) {
        return new Lease(Ip4Net.parse(subnet), null,
                new LeaseAttrs((Inet4Address) ip(publicIp), null, type, null, null), null);
    }

    static Lease v6(String subnet6, String publicIp6) {
        return new Lease(null, Ip6Net.parse(subnet6),
                new LeaseAttrs(null, (Inet6Address) ip(publicIp6), "host-gw", null, null), null);
    }

    static Lease dual(String subnet, String publicIp, String subnet6, String publicIp6) {
        return new Lease(Ip4Net.parse(subnet), Ip6Net.parse(subnet6),
                new LeaseAttrs(publicIp == null ? null : (Inet4Address) ip(publicIp),
                        publicIp6 == null ? null : (Inet6Address) ip(publicIp6), "host-gw", null, null), null);
    }

    static InetAddress ip(String literal) {
        try {
            return InetAddress.getByName(literal); // literals only: no DNS lookup happens
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(literal, e);
        }
    }
}
