package org.jflannel.flanneld.iface;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.util.Objects;

/**
 * The chosen external interface (upstream {@code backend.ExternalInterface}): the interface, its
 * address per enabled family, and the public addresses peers use to reach this node
 * ({@code --public-ip}/{@code --public-ipv6}, else the interface address).
 */
public record ExternalInterface(int index, String name, int mtu,
                                Inet4Address ifaceAddr, Inet6Address ifaceV6Addr,
                                Inet4Address extAddr, Inet6Address extV6Addr) {
    public ExternalInterface {
        Objects.requireNonNull(name, "name");
        if (mtu <= 0) {
            throw new IllegalArgumentException("mtu must be > 0, got " + mtu);
        }
        if (ifaceAddr == null && ifaceV6Addr == null) {
            throw new IllegalArgumentException("an external interface needs an IPv4 or IPv6 address");
        }
    }
}
