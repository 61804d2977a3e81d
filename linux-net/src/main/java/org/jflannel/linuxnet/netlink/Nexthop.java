package org.jflannel.linuxnet.netlink;

import java.net.InetAddress;
import java.util.Objects;

/**
 * A nexthop object (kernel ≥ 5.3, {@code ip nexthop}): a gateway on a device under an id, which routes
 * name with {@code nhid} ({@link Route#nexthopId()}). Only single gateway nexthops; groups and blackhole
 * nexthops are not decoded.
 *
 * @param id        1..2^32-1, as an unsigned int
 * @param linkIndex the device, > 0
 * @param protocol  RTPROT_*; iproute2 sends 0 (unspec) unless told
 */
public record Nexthop(int id, InetAddress gateway, int linkIndex, boolean onlink, int protocol) {
    public Nexthop {
        Objects.requireNonNull(gateway, "gateway");
        if (id == 0) {
            throw new IllegalArgumentException("nexthop id: must not be 0");
        }
        if (linkIndex <= 0) {
            throw new IllegalArgumentException("nexthop " + Integer.toUnsignedString(id) + ": link index must be positive, got " + linkIndex);
        }
        if (protocol < 0 || protocol > 255) {
            throw new IllegalArgumentException("nexthop " + Integer.toUnsignedString(id) + ": protocol 0..255, got " + protocol);
        }
    }

    /** {@code ip nexthop replace id <id> via <gw> dev <link> onlink}. */
    public static Nexthop onlink(int id, InetAddress gateway, int linkIndex) {
        return new Nexthop(id, gateway, linkIndex, true, 0);
    }

    /** Kernel-style summary for messages: {@code id 183763712 via 10.244.3.0}. */
    String describe() {
        return "id " + Integer.toUnsignedString(id) + " via " + Inets.format(gateway) + (onlink ? " onlink" : "");
    }
}
