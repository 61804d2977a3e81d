package org.jflannel.core;

import java.net.Inet4Address;
import java.net.Inet6Address;

/**
 * The interface flanneld sends encapsulated traffic through (REFERENCE §1 "External interface
 * selection"), as the daemon chose it, and the public addresses it publishes.
 *
 * @param address     the interface's own IPv4 address (null when IPv4 is off)
 * @param address6    the interface's own IPv6 address (null when IPv6 is off)
 * @param publicIp    ExtAddr: {@code --public-ip} / {@code node-public-ip}, else {@code address}
 * @param publicIpv6  ExtV6Addr: likewise for IPv6
 */
public record ExternalInterface(
        String name,
        int index,
        int mtu,
        Inet4Address address,
        Inet6Address address6,
        Inet4Address publicIp,
        Inet6Address publicIpv6) {

    public ExternalInterface {
        if (name == null || name.isEmpty() || name.length() > 15) {
            throw new IllegalArgumentException("interface name must be 1..15 characters, got " + name);
        }
        if (index <= 0) {
            throw new IllegalArgumentException("interface index must be positive, got " + index);
        }
        if (mtu < 68) {
            throw new IllegalArgumentException("interface MTU must be at least 68, got " + mtu);
        }
        if (address == null && address6 == null) {
            throw new IllegalArgumentException("interface " + name + " needs an IPv4 or an IPv6 address");
        }
        if (publicIp == null) {
            publicIp = address;
        }
        if (publicIpv6 == null) {
            publicIpv6 = address6;
        }
    }
}
