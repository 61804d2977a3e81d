package org.jflannel.flanneld.iface;

import java.net.InetAddress;
import java.util.List;
import java.util.Objects;

/**
 * What interface selection looks at: the node's interfaces (in index order) with their addresses,
 * and the default routes of the main table in kernel order. Filled by {@link RtNetlinkSnapshot};
 * tests build it by hand.
 */
public record NetSnapshot(List<Iface> interfaces, List<DefaultRoute> defaultRoutes) {

    public NetSnapshot {
        interfaces = List.copyOf(interfaces);
        defaultRoutes = List.copyOf(defaultRoutes);
    }

    /** One interface; {@code flags} are the IFF_* bits (informational). */
    public record Iface(int index, String name, int mtu, int flags, List<Addr> addresses) {
        public Iface {
            Objects.requireNonNull(name, "name");
            addresses = List.copyOf(addresses);
        }
    }

    /** One address with the IFA_F_* properties address preference looks at; {@code scope} is RT_SCOPE_*. */
    public record Addr(InetAddress ip, int prefixLength, int scope, boolean permanent, boolean deprecated, boolean temporary) {
        public Addr {
            Objects.requireNonNull(ip, "ip");
        }
    }

    /** A route to 0.0.0.0/0 or ::/0 (or without destination) in the main table; {@code linkIndex} 0 = none (multipath). */
    public record DefaultRoute(boolean ipv6, int linkIndex) {
    }
}
