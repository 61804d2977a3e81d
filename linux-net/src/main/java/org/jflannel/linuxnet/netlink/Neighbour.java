package org.jflannel.linuxnet.netlink;

import java.net.InetAddress;
import java.util.Objects;
import org.jflannel.core.MacAddress;

/**
 * An ARP/NDP entry.
 *
 * @param mac   null when the kernel has no link-layer address for it (e.g. state FAILED)
 * @param state NUD_* (NUD_PERMANENT = 0x80)
 */
public record Neighbour(int linkIndex, InetAddress ip, MacAddress mac, int state) {
    public static final int NUD_PERMANENT = 0x80;

    public Neighbour {
        if (linkIndex <= 0) {
            throw new IllegalArgumentException("neighbour: link index must be positive, got " + linkIndex);
        }
        Objects.requireNonNull(ip, "neighbour ip");
    }

    public static Neighbour permanent(int linkIndex, InetAddress ip, MacAddress mac) {
        Objects.requireNonNull(mac, "neighbour mac");
        return new Neighbour(linkIndex, ip, mac, NUD_PERMANENT);
    }
}
