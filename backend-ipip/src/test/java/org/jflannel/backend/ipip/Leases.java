package org.jflannel.backend.ipip;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;

/** Builds peer leases for tests, as upstream's ipip publishes them: type ipip, no backend data. */
final class Leases {
    private Leases() {
    }

    static Lease v4(String subnet, String publicIp) {
        return typed(subnet, publicIp, "ipip");
    }

    static Lease typed(String subnet, String publicIp, String type) {
        return new Lease(Ip4Net.parse(subnet), null, new LeaseAttrs((Inet4Address) ip(publicIp), null, type, null, null), null);
    }

    static Lease v6Only(String subnet6) {
        return new Lease(null, Ip6Net.parse(subnet6), new LeaseAttrs(null, null, "ipip", null, null), null);
    }

    static Inet4Address ip4(String literal) {
        return (Inet4Address) ip(literal);
    }

    static InetAddress ip(String literal) {
        try {
            return InetAddress.getByName(literal); // literals only: no DNS lookup happens
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(literal, e);
        }
    }
}
