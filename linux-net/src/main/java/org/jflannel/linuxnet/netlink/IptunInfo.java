package org.jflannel.linuxnet.netlink;

import java.net.Inet4Address;

/**
 * The tunnel attributes of an {@code ipip} device as read back from the kernel (IFLA_INFO_DATA,
 * IFLA_IPTUN_*).
 *
 * @param local         null when any (0.0.0.0 or absent)
 * @param remote        null when any
 * @param underlayIndex 0 = none
 * @param ttl           0 = inherit from the inner packet
 * @param pmtudisc      whether the outer header carries DF (path MTU discovery); false = {@code nopmtudisc}
 * @param proto         4 (IPPROTO_IPIP), 137 (MPLS) or 0 (any)
 * @param encapType     0 = none (FOU 1, GUE 2)
 * @param external      collect-metadata (flow-based) mode
 */
public record IptunInfo(Inet4Address local, Inet4Address remote, int underlayIndex, int ttl, int tos, boolean pmtudisc,
                        int proto, int encapType, boolean external) {
    public IptunInfo {
        local = any(local) ? null : local;
        remote = any(remote) ? null : remote;
    }

    private static boolean any(Inet4Address a) {
        return a != null && a.isAnyLocalAddress();
    }
}
