package org.jflannel.backend.vxlan;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;

/** Builds peer leases for tests. */
final class Leases {
    private Leases() {
    }

    static Lease v4(String subnet, String publicIp, String mac) {
        return new Lease(Ip4Net.parse(subnet), null,
                new LeaseAttrs((Inet4Address) ip(publicIp), null, "vxlan", data(mac), null), null);
    }

    static Lease raw(String subnet, String publicIp, String type, String backendData) {
        return new Lease(Ip4Net.parse(subnet), null,
                new LeaseAttrs((Inet4Address) ip(publicIp), null, type, backendData, null), null);
    }

    static Lease dual(String subnet, String publicIp, String mac, String subnet6, String publicIp6, String mac6) {
        return new Lease(Ip4Net.parse(subnet), Ip6Net.parse(subnet6),
                new LeaseAttrs((Inet4Address) ip(publicIp), (Inet6Address) ip(publicIp6), "vxlan", data(mac), data(mac6)), null);
    }

    static Lease dualRaw(String subnet, String publicIp, String subnet6, String publicIp6, String data, String data6) {
        return new Lease(Ip4Net.parse(subnet), Ip6Net.parse(subnet6),
                new LeaseAttrs((Inet4Address) ip(publicIp), (Inet6Address) ip(publicIp6), "vxlan", data, data6), null);
    }

    static String data(String mac) {
        return "{\"VNI\":1,\"VtepMAC\":\"" + mac + "\"}";
    }

    static InetAddress ip(String literal) {
        try {
            return InetAddress.getByName(literal); // literals only: no DNS lookup happens
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(literal, e);
        }
    }
}
