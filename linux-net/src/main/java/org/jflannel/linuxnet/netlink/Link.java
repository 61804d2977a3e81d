package org.jflannel.linuxnet.netlink;

import java.util.Objects;
import org.jflannel.core.MacAddress;

/**
 * A network device as the kernel reports it.
 *
 * @param kind  "vxlan", "veth", "bridge", "dummy", "tun", ... or "" when the kernel reports none
 * @param mac   null when the device has no 6-byte hardware address
 * @param flags the IFF_* flags
 * @param vxlan null unless kind is vxlan
 * @param iptun null unless kind is ipip
 */
public record Link(int index, String name, String kind, int mtu, MacAddress mac, boolean up, int flags, VxlanInfo vxlan,
                   IptunInfo iptun) {
    public static final int IFF_UP = 0x1;

    public Link {
        if (index <= 0) {
            throw new IllegalArgumentException("link index must be positive, got " + index);
        }
        Objects.requireNonNull(name, "name");
        kind = kind == null ? "" : kind;
    }

    /** A device that is no ipip tunnel. */
    public Link(int index, String name, String kind, int mtu, MacAddress mac, boolean up, int flags, VxlanInfo vxlan) {
        this(index, name, kind, mtu, mac, up, flags, vxlan, null);
    }
}
